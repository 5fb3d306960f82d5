// Command notes is the example's MCP server (stdio): it keeps notes in the
// kv service. The gateway starts kv on the first call, waits until it is
// healthy and passes its address as KV_HOST and KV_PORT.
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

// kv sends one command to the kv service and returns its answer.
func kv(command string) (string, error) {
	host, port := os.Getenv("KV_HOST"), os.Getenv("KV_PORT")
	if host == "" || port == "" {
		return "", fmt.Errorf("KV_HOST and KV_PORT are not set; run me through skillgate with requires: [kv]")
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 3*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprintln(c, command)
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

func result(text string, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return mcp.NewToolResultError("kv: " + err.Error()), nil
	}
	return mcp.NewToolResultText(text), nil
}

func main() {
	s := server.NewMCPServer("notes", "1.0.0")
	s.AddTool(mcp.NewTool("save",
		mcp.WithDescription("Save a note under a one-word title."),
		mcp.WithString("title", mcp.Required(), mcp.Pattern(`^\S+$`)),
		mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := strings.ReplaceAll(req.GetString("text", ""), "\n", " ")
			return result(kv("SET " + req.GetString("title", "") + " " + text))
		})
	s.AddTool(mcp.NewTool("read",
		mcp.WithDescription("Read the note with this title."),
		mcp.WithString("title", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(kv("GET " + req.GetString("title", "")))
		})
	s.AddTool(mcp.NewTool("list", mcp.WithDescription("List the titles of all notes.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(kv("KEYS"))
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
