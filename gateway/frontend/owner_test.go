package frontend

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSessionBoundToToken: with auth.tokens [A, B], a session A
// initialized is unknown (404, as for a session never issued) to
// requests sent with B, on every path — a POST, its GET stream, DELETE —
// and a DELETE with B does not end it: A goes on using it.
func TestSessionBoundToToken(t *testing.T) {
	fe := New(echoRouter{}, Options{HTTP: HTTPOptions{Tokens: []string{"token-a", "token-b"}}})
	url := serveOneTool(t, fe)
	as := func(id, token string) map[string]string {
		h := legacyHeaders(id)
		h["Authorization"] = "Bearer " + token
		return h
	}
	e := do(t, http.MethodPost, url, initBody, map[string]string{"Authorization": "Bearer token-a"})
	id := e.header.Get("Mcp-Session-Id")
	if e.status != http.StatusOK || id == "" {
		t.Fatalf("initialize with A: %d %q", e.status, e.body)
	}
	if e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, as(id, "token-a")); e.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized with A: %d %q", e.status, e.body)
	}
	for _, c := range []struct{ name, method, body string }{
		{"ping", http.MethodPost, `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
		{"tools/list", http.MethodPost, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`},
		{"tools/call", http.MethodPost, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"s__t","arguments":{}}}`},
		{"cancel", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		{"not JSON-RPC", http.MethodPost, `{"jsonrpc":"2.0","id":`},
		{"GET stream", http.MethodGet, ""},
		{"DELETE", http.MethodDelete, ""},
	} {
		e := do(t, c.method, url, c.body, as(id, "token-b"))
		if e.status != http.StatusNotFound {
			t.Errorf("%s with B in A's session: %d %q; want 404", c.name, e.status, e.body)
		}
	}
	if e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":10,"method":"ping"}`, as(id, "token-a")); e.status != http.StatusOK {
		t.Errorf("ping with A after B's requests: %d %q; the session should live on", e.status, e.body)
	}
}

// TestOneGETStreamPerSession: a session has one GET stream; a second GET
// while it is open is answered 409 Conflict, and once the first closed a
// new one opens.
func TestOneGETStreamPerSession(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	url := serveOneTool(t, fe)
	id := initSession(t, url)
	open := func() (context.CancelFunc, <-chan struct{}) {
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		for k, v := range legacyHeaders(id) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "text/event-stream")
		ended := make(chan struct{})
		before := streamCount(fe)
		go func() {
			defer close(ended)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		for deadline := time.Now().Add(5 * time.Second); streamCount(fe) == before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the GET stream never opened")
			}
		}
		return cancel, ended
	}
	closeFirst, ended := open()
	for range 3 {
		e := do(t, http.MethodGet, url, "", legacyHeaders(id))
		if e.status != http.StatusConflict {
			t.Fatalf("a second GET stream in the session: %d %q; want 409", e.status, e.body)
		}
	}
	closeFirst()
	<-ended
	// The server notices the client went away on its own time.
	for deadline := time.Now().Add(5 * time.Second); streamCount(fe) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the closed GET stream is still served")
		}
	}
	closeSecond, ended := open()
	closeSecond()
	<-ended
}

// TestListenStreamsCapped: the 2026-07-28 subscriptions/listen streams
// open at once over HTTP are capped (Options.MaxListenStreams): one past
// the cap is refused with 503 and a JSON-RPC error that says so, and a
// place a closed stream gave back is taken again.
func TestListenStreamsCapped(t *testing.T) {
	fe := New(echoRouter{}, Options{MaxListenStreams: 2})
	url := serveOneTool(t, fe)
	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMetaOf("") + `}}`
	headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
	// listen opens a stream and waits for its acknowledgement.
	listen := func() context.CancelFunc {
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("subscriptions/listen: %d %q", resp.StatusCode, b)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && !strings.Contains(sc.Text(), "notifications/subscriptions/acknowledged") {
		}
		return cancel
	}
	first := listen()
	listen()
	for range 3 {
		e := do(t, http.MethodPost, url, body, headers)
		if e.status != http.StatusServiceUnavailable || !strings.Contains(e.body, "at most 2") {
			t.Fatalf("a third subscriptions/listen: %d %q; want 503 naming the cap", e.status, e.body)
		}
		if e.rpcError(t) == nil {
			t.Fatalf("a third subscriptions/listen: %q is no JSON-RPC error", e.body)
		}
	}
	first()
	for deadline := time.Now().Add(5 * time.Second); fe.nlisten.Load() >= 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the closed subscriptions/listen stream still holds its place")
		}
	}
	listen()
}
