// Logging is deprecated from 2026-07-28 on (SEP-2577) but still served,
// and 2025-11-25 clients and servers use it.
//
//lint:file-ignore SA1019 the gateway must relay logging while servers use it
package gateway_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOutOfCallLogging: server-everything's simulated logging sends a log
// message every 5 s outside any call, as servers do for their background
// work. Through the gateway each legacy session gets them as on a direct
// connection, filtered by its own logging/setLevel: the session that asked
// for debug gets every level, one that set nothing only error and above
// (mcp-go's default for it).
func TestOutOfCallLogging(t *testing.T) {
	r := startEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := r.url + "/mcp"

	type logged struct {
		mu     sync.Mutex
		levels []mcp.LoggingLevel
	}
	connect := func(got *logged) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				got.mu.Lock()
				defer got.mu.Unlock()
				got.levels = append(got.levels, req.Params.Level)
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var all, quiet logged
	verbose := connect(&all)
	connect(&quiet)
	if err := verbose.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// Toggling sends one message during the call, then one every 5 s.
	if text, isErr := goSDKCall(t, ctx, verbose, "everything__toggle-simulated-logging", map[string]any{}); isErr {
		t.Fatalf("toggle: %s", text)
	}
	defer goSDKCall(t, context.Background(), verbose, "everything__toggle-simulated-logging", map[string]any{})

	for deadline := time.Now().Add(40 * time.Second); ; {
		all.mu.Lock()
		n := len(all.levels)
		all.mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the debug session got %d log messages in 40 s; want the one of the toggle call and two sent outside any call", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	quiet.mu.Lock()
	defer quiet.mu.Unlock()
	below := []mcp.LoggingLevel{"debug", "info", "notice", "warning"}
	for _, l := range quiet.levels {
		if slices.Contains(below, l) {
			t.Errorf("the session that set no level got a %q message; want error and above only (got %v)", l, quiet.levels)
		}
	}
	t.Logf("debug session: %v; default session: %v", all.levels, quiet.levels)
}
