package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestListenEndKeepsCalls stops a 2026-07-28 server as a draining gateway
// does, while a call runs: it takes no new connections, and its
// subscriptions/listen stream ends, so that the stream's reconnection is
// refused. The call's POST is still open; the call must end with its
// answer, not with the failed reconnection.
func TestListenEndKeepsCalls(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	s := server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("slow"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		started <- struct{}{}
		<-release
		return mcpgo.NewToolResultText("done"), nil
	})
	inner := server.NewStreamableHTTPServer(s)
	var mu sync.Mutex
	var endListen []context.CancelFunc // one for each listen stream served
	listening := make(chan struct{}, 16)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestMethod(peekBody(r)) == "subscriptions/listen" {
			ctx, cancel := context.WithCancel(r.Context())
			mu.Lock()
			endListen = append(endListen, cancel)
			mu.Unlock()
			r = r.WithContext(ctx)
			listening <- struct{}{}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the executor's cleanup: it holds a listen stream
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before ts.Close, which waits for the tool
	h := newHarness(t)
	h.load("slow", map[string]any{"url": ts.URL, "protocol_version": "2026-07-28"})
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("the listen stream never opened")
	}

	type answer struct {
		res json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := h.call("slow", "slow", nil, nil)
		done <- answer{res, err}
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the call never reached the tool")
	}
	// The stop: no new connections, idle ones closed, the listen stream
	// ended; the call's connection stays open.
	ts.Config.SetKeepAlivesEnabled(false)
	_ = ts.Listener.Close()
	mu.Lock()
	for _, end := range endListen {
		end()
	}
	mu.Unlock()

	// Wait until the listen stream's reconnection was refused.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(h.logs.String(), "refused") {
		select {
		case a := <-done:
			t.Fatalf("the call ended before its answer came: %v (result %s)", a.err, a.res)
		case <-deadline:
			t.Fatal("the listen stream's reconnection was never refused")
		case <-tick.C:
		}
	}
	free()
	a := <-done
	if a.err != nil {
		t.Fatalf("the call failed: %v", a.err)
	}
	if got := text(t, a.res); got != "done" {
		t.Fatalf("the call answered %q; want done", got)
	}
}

// roundRobin sends each request to the next of its handlers, as a load
// balancer without sticky sessions does.
type roundRobin struct {
	mu   sync.Mutex
	next int
	hs   []http.Handler
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rr.mu.Lock()
	h := rr.hs[rr.next%len(rr.hs)]
	rr.next++
	rr.mu.Unlock()
	h.ServeHTTP(w, r)
}

// TestSessionLostError: a session-only server behind a load balancer
// without sticky sessions loses the session on the next request. The
// error says so without promising a reconnection (a one-shot client
// makes none), and is ErrSessionLost for a caller to explain.
func TestSessionLostError(t *testing.T) {
	var calls atomic.Int32
	rr := &roundRobin{hs: []http.Handler{
		server.NewStreamableHTTPServer(hiServer(&calls), server.WithStateful(true)),
		server.NewStreamableHTTPServer(hiServer(&calls), server.WithStateful(true)),
	}}
	ts := httptest.NewServer(rr)
	t.Cleanup(ts.Close)
	e := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = e.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := mustJSON(map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
	_, err := e.Load(ctx, sdk.LoadRequest{Source: "lb", Kind: Kind, Spec: spec})
	if err == nil {
		t.Fatal("load succeeded on a server that loses every session")
	}
	if !errors.Is(err, ErrSessionLost) {
		t.Errorf("the error is not ErrSessionLost: %v", err)
	}
	if strings.Contains(err.Error(), "reconnecting") {
		t.Errorf("the error promises a reconnection: %v", err)
	}
}

// TestCancelReason: a call whose context ends is cancelled upstream with
// the context's cause as the reason when it has one, and else with
// neutral words, not Go's "context canceled".
func TestCancelReason(t *testing.T) {
	s := server.NewMCPServer("wait", "1.0.0", server.WithToolCapabilities(true))
	started := make(chan struct{}, 1)
	s.AddTool(mcpgo.NewTool("wait"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return mcpgo.NewToolResultText("cancelled"), nil
	})
	inner := server.NewStreamableHTTPServer(s)
	reasons := make(chan string, 4)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := peekBody(r)
		var m struct {
			Method string `json:"method"`
			Params struct {
				Reason string `json:"reason"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "notifications/cancelled" {
			reasons <- m.Params.Reason
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	e := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = e.Close() })
	lctx, lcancel := context.WithTimeout(context.Background(), time.Minute)
	defer lcancel()
	spec := mustJSON(map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
	if _, err := e.Load(lctx, sdk.LoadRequest{Source: "wait", Kind: Kind, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cause error
		want  string
	}{
		{"no cause", nil, "cancelled by the client"},
		{"the client's reason", errors.New("probe"), "probe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := e.Call(ctx, sdk.CallRequest{Source: "wait", Method: "tools/call", Params: json.RawMessage(`{"name":"wait"}`)}, &sdktest.Recorder{})
				done <- err
			}()
			select {
			case <-started:
			case <-time.After(20 * time.Second):
				t.Fatal("the call never reached the tool")
			}
			cancel(tc.cause)
			<-done
			select {
			case got := <-reasons:
				if got != tc.want {
					t.Fatalf("the upstream was told %q; want %q", got, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the upstream was never told of the cancellation")
			}
		})
	}
}

// fakeClock is a clock whose time moves only when the test says, and whose
// waits end when the test takes them from waits.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan time.Duration
}

var _ clock = (*fakeClock)(nil)

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Wait(ctx context.Context, d time.Duration) bool {
	select {
	case c.waits <- d:
		return true
	case <-ctx.Done():
		return false
	}
}

// TestListenBackoffResets ends a 2026-07-28 server's subscriptions/listen
// stream again and again: the wait before each reopening doubles up to
// maxBackoff, and after a stream that stayed open healthyAfter it starts
// again from listenMinBackoff.
func TestListenBackoffResets(t *testing.T) {
	s := server.NewMCPServer("listen", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("noop"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("ok"), nil
	})
	inner := server.NewStreamableHTTPServer(s)
	opened := make(chan context.CancelFunc, 1) // ends the listen stream just opened
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestMethod(peekBody(r)) == "subscriptions/listen" {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			r = r.WithContext(ctx)
			select {
			case opened <- cancel:
			case <-ctx.Done():
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	clk := &fakeClock{now: time.Unix(1_000_000, 0), waits: make(chan time.Duration)}
	h := newHarness(t, withClock(clk))
	h.load("listen", map[string]any{"url": ts.URL, "protocol_version": "2026-07-28"})

	// endStream ends the open stream after it stayed open for up, and
	// returns the wait the executor then chose.
	endStream := func(up time.Duration) time.Duration {
		t.Helper()
		var end context.CancelFunc
		select {
		case end = <-opened:
		case <-time.After(20 * time.Second):
			t.Fatal("the listen stream was not (re)opened")
		}
		clk.advance(up)
		end()
		select {
		case d := <-clk.waits:
			return d
		case <-time.After(20 * time.Second):
			t.Fatal("the executor did not wait to reopen the ended stream")
		}
		return 0
	}
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, maxBackoff, maxBackoff} {
		if got := endStream(0); got != want {
			t.Fatalf("after a stream that ended at once: waited %s; want %s", got, want)
		}
	}
	if got := endStream(healthyAfter - time.Second); got != maxBackoff {
		t.Fatalf("after a stream that lasted under healthyAfter: waited %s; want %s", got, maxBackoff)
	}
	if got := endStream(healthyAfter); got != listenMinBackoff {
		t.Fatalf("after a stream open for healthyAfter: waited %s; want %s", got, listenMinBackoff)
	}
	if got := endStream(0); got != 2*listenMinBackoff {
		t.Fatalf("after the reset, a stream that ended at once: waited %s; want %s", got, 2*listenMinBackoff)
	}
}

// peekBody reads r's body and puts it back for the handler after.
func peekBody(r *http.Request) []byte {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

// requestMethod is the method of the JSON-RPC message body, "" if none.
func requestMethod(body []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Method
}
