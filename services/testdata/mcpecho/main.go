// Command mcpecho is a stdio MCP server for the services and gateway tests,
// built static and run FROM scratch as a container.
//
// Its tools: echo (returns its text argument), whereami (the hostname and
// the network interfaces it sees, so a test can check --network none) and
// kv (sends one command to the kv test service found at KV_HOST:KV_PORT, so
// a test can check the wiring variables reach a real client).
package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

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
	s.AddTool(mcp.NewTool("kv", mcp.WithDescription("Send one command (SET k v, GET k) to the kv service at KV_HOST:KV_PORT."),
		mcp.WithString("command", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			addr := net.JoinHostPort(os.Getenv("KV_HOST"), os.Getenv("KV_PORT"))
			c, err := net.DialTimeout("tcp", addr, 3*time.Second)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintln(c, req.GetString("command", ""))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(strings.TrimSpace(line)), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
