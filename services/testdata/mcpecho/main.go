// Command mcpecho is a stdio MCP server for the services and gateway tests,
// built static and run FROM scratch as a container.
//
// Its tools: echo (returns its text argument) and whereami (the hostname and
// whether the process sees a network interface besides loopback, so a test
// can check --network none).
package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("mcpecho", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back."),
		mcp.WithString("text", mcp.Required(), mcp.Description("what to echo"))),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("whereami", mcp.WithDescription("Hostname, network interfaces and a variable.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			host, _ := os.Hostname()
			var ifaces []string
			list, _ := net.Interfaces()
			for _, i := range list {
				ifaces = append(ifaces, i.Name)
			}
			return mcp.NewToolResultText(fmt.Sprintf("host=%s ifaces=%v greeting=%s", host, ifaces, os.Getenv("GREETING"))), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
