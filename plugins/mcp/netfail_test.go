package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// resetDrop serves next, except that it resets the TCP connection of a
// tools/call of the tool "drop" instead of answering it: one POST fails
// on the network while the server stays up.
func resetDrop(t *testing.T, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := peekBody(r)
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method != "tools/call" || m.Params.Name != "drop" {
			next.ServeHTTP(w, r)
			return
		}
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack the connection of the drop call: %v", err)
			return
		}
		_ = c.(*net.TCPConn).SetLinger(0) // close with a reset
		_ = c.Close()
	})
}

// TestPostResetKeepsCalls: over streamable HTTP, the POST of one call is
// reset while other calls are in flight on their own POSTs and the server
// stays up. Only that call fails, saying so; the others get their answers
// and the connection stays. When the server is really stopped, a call
// fails as unavailable, the connection is torn down, and the source comes
// back once the server is started again on the same address.
func TestPostResetKeepsCalls(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			release := make(chan struct{})
			started := make(chan struct{}, 3)
			s := server.NewMCPServer("netfail", "1.0.0", server.WithToolCapabilities(true))
			s.AddTool(mcpgo.NewTool("slow"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				started <- struct{}{}
				select {
				case <-release:
					return mcpgo.NewToolResultText("done"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
			s.AddTool(mcpgo.NewTool("drop"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("never: resetDrop cuts this call"), nil
			})
			handler := resetDrop(t, server.NewStreamableHTTPServer(s))
			ts := httptest.NewServer(handler)
			addr := ts.Listener.Addr().String()
			stopped := false
			t.Cleanup(func() {
				if !stopped {
					ts.CloseClientConnections() // the standing GET stream stays open else
					ts.Close()
				}
			})
			h := newHarness(t)
			h.load("remote", map[string]any{"url": ts.URL, "protocol_version": version})

			type answer struct {
				res json.RawMessage
				err error
			}
			answers := make(chan answer, 3)
			for range 3 {
				go func() {
					res, err := h.call("remote", "slow", nil, nil)
					answers <- answer{res, err}
				}()
			}
			for range 3 {
				select {
				case <-started:
				case a := <-answers:
					t.Fatalf("a slow call ended before its tool ran: %v", a.err)
				case <-time.After(20 * time.Second):
					t.Fatal("the slow calls never reached their tool")
				}
			}

			_, err := h.call("remote", "drop", nil, nil)
			t.Logf("the reset call's error: %v", err)
			if err == nil || errors.Is(err, sdk.ErrUnavailable) || !strings.Contains(err.Error(), "the server still answers") ||
				!strings.Contains(err.Error(), "tools/call") || !strings.Contains(err.Error(), "reset") {
				t.Errorf("the reset call's error: %v; want one that says its POST was reset, the server still answers, and is not sdk.ErrUnavailable", err)
			}
			close(release)
			for range 3 {
				select {
				case a := <-answers:
					if a.err != nil {
						t.Errorf("a call in flight when another's POST was reset failed: %v", a.err)
					} else if got := text(t, a.res); got != "done" {
						t.Errorf("a call in flight answered %q; want done", got)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("a call in flight never ended")
				}
			}
			if st := h.e.Status()["remote"]; st.State != StateReady || st.Restarts != 0 {
				t.Fatalf("after one reset POST the source is %s with %d restarts; want ready, never restarted", st.State, st.Restarts)
			}

			// The server really stops: a call fails as unavailable and the
			// source fails, then recovers once the server is back.
			ts.CloseClientConnections()
			ts.Close()
			stopped = true
			_, err = h.call("remote", "slow", nil, nil)
			isUnavailable(t, err, "remote", "connection refused")
			h.waitChange(10*time.Second, "remote failed", func(ch sdk.Change) bool {
				return ch.Source == "remote" && ch.Status != nil && ch.Status.State == StateFailed
			})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("listen again on %s: %v", addr, err)
			}
			ts = httptest.NewUnstartedServer(handler)
			_ = ts.Listener.Close()
			ts.Listener = ln
			ts.Start()
			stopped = false
			h.waitChange(30*time.Second, "remote ready again", func(ch sdk.Change) bool {
				return ch.Source == "remote" && ch.Status != nil && ch.Status.State == StateReady && ch.Status.Restarts >= 1
			})
			if got := text(t, h.mustCall("remote", "slow", nil, nil)); got != "done" {
				t.Fatalf("after the restart: %q", got)
			}
		})
	}
}
