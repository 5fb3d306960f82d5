// Package mcp is the built-in "mcp" executor: it imports MCP servers, each
// a source of tools, resources, resource templates and prompts for the
// gateway. A source is a stdio server launched and supervised as a child
// process, or a remote server reached over streamable HTTP or legacy SSE.
// It is the only package of skillgate that talks to MCP servers as a client
// (through mcp-go's client/transport for streamable HTTP; stdio and the
// legacy HTTP+SSE transport have wires of their own).
//
// Each source has exactly one upstream, shared by all calls: one process
// for stdio, never one per session or per call. Its spec (see [Spec]) uses
// the keys of Claude Desktop and friends:
//
//	{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}
//	{"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer t"}}
//
// Definitions and results cross the executor boundary as the raw JSON the
// upstream sent, so nothing a newer MCP revision adds is lost. Progress and
// log notifications of a call, and the server requests it causes (sampling,
// elicitation, roots), are routed to that call's client, on every
// transport. An upstream that does not start within its start_timeout
// fails with what it wrote meanwhile; a remote one that cannot be reached
// or refuses the gateway fails with a *ConnectError. An upstream that
// dies is reported failed with its exit status and last stderr lines, its
// in-flight calls fail at once with sdk.ErrUnavailable, and it is restarted
// with exponential backoff (200ms to 30s); other sources are not affected.
//
// Secrets are masked ("xxxxx") in everything the executor shows of an
// upstream (its log, errors, status): URL credentials (a password, or a
// username alone), header values, the values of env entries named like a
// credential (API_TOKEN, DB_PASSWORD, GITHUB_PAT; see
// redact.CredentialName), env and args values shaped like a token
// (redact.TokenLike), the passwords inside URLs and connection strings in
// env and args (redact.EmbeddedSecrets), and the values in Spec.Secrets,
// each at least redact.MinSecret bytes long, also as JSON escapes them. A
// stdio upstream's stderr and stdout lines are masked as they arrive,
// before they are cut or kept.
//
// The executor runs out of process like any plugin:
//
//	func main() {
//		e := mcp.New()
//		defer e.Close()
//		sdk.Serve(e)
//	}
//
// or in the gateway's process, through the same sdk.Executor interface.
package mcp
