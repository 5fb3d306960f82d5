package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/internal/testenv"
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
	n := 0
	testenv.ServeStubMCPCalls("roots", in, out, func(id json.RawMessage, send func(string)) {
		n++
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"roots-%d","method":"roots/list"}`, n))
		go func() {
			time.Sleep(delay)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, id))
		}()
	})
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
