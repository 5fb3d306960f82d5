package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const envRootsStub = "SKILLGATE_GATEWAY_TEST_ROOTS_STUB" // delay in ms

func init() {
	if v := os.Getenv(envRootsStub); v != "" {
		ms, _ := strconv.Atoi(v)
		serveRootsStub(time.Duration(ms)*time.Millisecond, os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// serveRootsStub is a stdio MCP server whose tool "noop" sends the client
// a roots/list request of its own (as server-everything does unsolicited,
// after it initializes) in the middle of each call, and answers the call
// delay later without waiting for the roots answer.
func serveRootsStub(delay time.Duration, in *os.File, out *os.File) {
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, s)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue
		}
		reply := `"error":{"code":-32601,"message":"method not found"}`
		switch m.Method {
		case "initialize":
			reply = fmt.Sprintf(`"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"roots","version":"1"}}`, m.Params.ProtocolVersion)
		case "tools/list":
			reply = `"result":{"tools":[{"name":"noop","inputSchema":{"type":"object"}}]}`
		case "ping":
			reply = `"result":{}`
		case "tools/call":
			n++
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"roots-%d","method":"roots/list"}`, n))
			id := m.ID
			go func() {
				time.Sleep(delay)
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, id))
			}()
			continue
		}
		write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, reply))
	}
}

// TestRootsMidCallModern: an upstream's own roots/list request that comes
// while a 2026-07-28 client's call runs must not leave that call's answer
// empty.
func TestRootsMidCallModern(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, delay := range []int{0, 20} {
		t.Run(strconv.Itoa(delay)+"ms", func(t *testing.T) {
			r := startGateway(t, fmt.Sprintf("servers:\n  roots: {command: %q, env: {%s: %q, GORACE: atexit_sleep_ms=0}}\n",
				exe, envRootsStub, strconv.Itoa(delay)), nil)
			r.waitReady(t, "roots")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs := goSDKSession(t, ctx, r.url+"/mcp", "2026-07-28")
			for i := 0; i < 5; i++ {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots__noop"})
				if err != nil {
					t.Fatalf("call %d: %v\n%s", i, err, r.log.String())
				}
				if res.IsError {
					t.Fatalf("call %d: isError %+v", i, res.Content)
				}
			}
		})
	}
}
