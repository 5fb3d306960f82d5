package frontend

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// stalledPost sends a POST of path to addr whose Content-Length promises
// more than sent arrives: first is sent at once, then one byte every drip
// (never, when drip is 0). It returns the status line of the answer, or
// "" when the connection closed without one, failing the test when
// neither came within 20s.
func stalledPost(t *testing.T, addr, path, first string, drip time.Duration) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n%s", path, first)
	if drip > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for tick := time.NewTicker(drip); ; {
				select {
				case <-stop:
					tick.Stop()
					return
				case <-tick.C:
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("POST %s with a stalled body: no answer and the connection still open after 20s", path)
	}
	return strings.TrimSpace(line)
}

// TestStalledBodyEnds: a request body that stops arriving, or that
// arrives too slowly to be whole within the total limit, ends with 408
// and its connection closed, on the endpoint and on the resources Guard
// serves; once a body is read, the deadline is lifted, so a call that runs
// longer than the limits is not cut.
func TestStalledBodyEnds(t *testing.T) {
	br := blockRouter{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	fe := New(br, Options{})
	fe.bodyLimits = bodyLimits{stall: 300 * time.Millisecond, total: 1500 * time.Millisecond}
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"wait","inputSchema":{"type":"object"}}`)},
	}}}, catalog.Options{}))
	mux := http.NewServeMux()
	mux.Handle("/mcp", fe.Handler())
	mux.Handle("/other", fe.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})))
	mux.Handle("/unread", fe.BoundBodies(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	ts := httptest.NewServer(mux)
	defer ts.Close()
	addr := ts.Listener.Addr().String()

	if got := stalledPost(t, addr, "/mcp", `{"jsonrpc":"2.0",`, 0); !strings.Contains(got, "408") {
		t.Errorf("stalled body at /mcp: %q, want 408", got)
	}
	if got := stalledPost(t, addr, "/mcp", `{"jsonrpc":"2.0",`, 50*time.Millisecond); !strings.Contains(got, "408") {
		t.Errorf("body dripping at /mcp past the total limit: %q, want 408", got)
	}
	if got := stalledPost(t, addr, "/other", "{", 0); strings.Contains(got, "200") {
		t.Errorf("stalled body at a guarded resource: %q, want an error", got)
	}
	// A handler that never reads the body answers; the server's reading of
	// the rest then ends at the deadline, closing the connection.
	if got := stalledPost(t, addr, "/unread", "{", 0); !strings.Contains(got, "200") {
		t.Errorf("unread stalled body: %q, want the handler's 200", got)
	}

	// A call that runs for several times the limits keeps running.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__wait","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range legacyHeaders(initSession(t, ts.URL+"/mcp")) {
		req.Header.Set(k, v)
	}
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case <-br.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not reach the router within 30s")
	}
	select {
	case err := <-br.ended:
		t.Fatalf("a call whose body was read ended after less than the total body limit: %v", err)
	case <-time.After(2 * fe.bodyLimits.total):
	}
	cancel()
	select {
	case <-br.ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end within 30s of its client going")
	}
}
