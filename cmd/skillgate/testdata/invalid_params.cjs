// A stdio MCP server on the TypeScript SDK's low-level Server whose one
// tool refuses every call with a JSON-RPC error, as SDK servers do: the
// SDK's McpError puts "MCP error -32602: " in front of the message.
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode } = require('@modelcontextprotocol/sdk/types.js');

const server = new Server({ name: 'strict', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } }],
}));
server.setRequestHandler(CallToolRequestSchema, async () => {
  throw new McpError(ErrorCode.InvalidParams, 'a must be a number');
});
server.connect(new StdioServerTransport());
