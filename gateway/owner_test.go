package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestSharedStdioServerClients: two clients (go-sdk sessions) share one
// stdio upstream. While both have a call running, a sampling request the
// upstream sends cannot be tied to either call over the pipe, so the
// gateway refuses it instead of asking the wrong client; while only one
// client has calls running (two of them), its request reaches it. This
// checks that the front end gives each session its own client key and one
// session's calls the same key.
func TestSharedStdioServerClients(t *testing.T) {
	fault := goBuild(t, "./plugins/mcp/testdata/faultserver", "faultserver")
	r := startGateway(t, `
servers:
  f:
    command: ${FAULT}
`, map[string]string{"FAULT": fault})
	r.waitReady(t, "f")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	waitFile := func(name string) { testenv.WaitForFile(t, file(name), 20*time.Second, nil) }
	session := func(name string, asked *atomic.Int32) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
			//lint:ignore SA1019 the gateway must relay sampling while servers use it
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked.Add(1)
				//lint:ignore SA1019 see above
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answered by " + name}}, nil
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect %s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var askedA, askedB atomic.Int32
	a, b := session("client-a", &askedA), session("client-b", &askedB)

	// hang starts a call of cs that runs until the returned function
	// cancels it, and waits until the upstream has it.
	hang := func(cs *mcp.ClientSession, mark string) (stop func()) {
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = cs.CallTool(cctx, &mcp.CallToolParams{Name: "f__hang", Arguments: map[string]any{"mark": file(mark)}})
		}()
		waitFile(mark)
		return func() { ccancel(); <-done }
	}
	// sample calls the sampling tool of cs, which waits for release.
	sample := func(cs *mcp.ClientSession, mark, release string) <-chan string {
		out := make(chan string, 1)
		go func() {
			text, _ := goSDKCallErr(ctx, cs, "f__sample", map[string]any{"mark": file(mark), "after": file(release)})
			out <- text
		}()
		waitFile(mark)
		return out
	}

	// a's call waits at the upstream while b's starts: b's is the latest.
	res := sample(a, "a-sample", "release-1")
	stop := hang(b, "b-hang")
	if err := os.WriteFile(file("release-1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if text := <-res; !strings.Contains(text, "calls of several clients") || askedA.Load()+askedB.Load() != 0 {
		t.Fatalf("with both clients' calls running the upstream saw %q (a asked %d times, b %d)", text, askedA.Load(), askedB.Load())
	}
	stop()

	// Two calls of a alone: its request reaches it.
	res = sample(a, "a-sample-2", "release-2")
	stop = hang(a, "a-hang")
	defer stop()
	if err := os.WriteFile(file("release-2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if text := <-res; !strings.Contains(text, "answered by client-a") || askedA.Load() != 1 || askedB.Load() != 0 {
		t.Fatalf("with only a's calls running the upstream saw %q (a asked %d times, b %d)", text, askedA.Load(), askedB.Load())
	}
}

// goSDKCallErr calls a tool and returns its text content, or the error's
// text when the call fails.
func goSDKCallErr(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error(), err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), nil
}
