package frontend

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// exchange is one HTTP request to a front end and what came back.
type exchange struct {
	status int
	header http.Header
	body   string
}

// rpcError is the JSON-RPC error of the answer, or nil.
func (e exchange) rpcError(t *testing.T) *sdk.RPCError {
	t.Helper()
	body := e.body
	for _, line := range strings.Split(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			body = data // an SSE answer: its last event
		}
	}
	var msg struct {
		Error *sdk.RPCError `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("answer %d %q is not JSON-RPC: %v", e.status, e.body, err)
	}
	return msg.Error
}

// do sends one request to the front end at url+path with headers (a "-"
// value leaves the header out; "Host" sets the request's Host; Content-Type
// and Accept default to what clients send).
func do(t *testing.T, method, url, body string, headers map[string]string) exchange {
	t.Helper()
	// A GET stream mcp-go opens lasts until this ends.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		switch {
		case v == "-":
			req.Header.Del(k)
		case k == "Host":
			req.Host = v
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return exchange{resp.StatusCode, resp.Header, string(b)}
}

// legacyHeaders are a 2025-11-25 request's headers in session id.
func legacyHeaders(id string) map[string]string {
	return map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": id}
}

// initSession initializes a 2025-11-25 session at url and returns its id.
func initSession(t *testing.T, url string) string {
	t.Helper()
	e := do(t, http.MethodPost, url, initBody, nil)
	id := e.header.Get("Mcp-Session-Id")
	if e.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q, session %q", e.status, e.body, id)
	}
	do(t, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacyHeaders(id))
	return id
}

// TestSessionsMustBeIssued: a 2025-11-25 request under a session id the
// gateway never issued, or of a session that ended (DELETE), is answered
// 404 with a JSON-RPC error telling the client to initialize again, on
// every path: the fast paths, the meta-tools, extension methods, mcp-go's
// own methods, GET streams and DELETE. Nothing is kept for such an id.
// 2026-07-28 requests have no session and ignore the header.
func TestSessionsMustBeIssued(t *testing.T) {
	fe := New(echoRouter{}, Options{Methods: map[string]Method{
		"x/echo": func(context.Context, json.RawMessage, sdk.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		},
	}})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools:     []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"demo://doc","name":"doc"}`)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"

	requests := []struct{ name, method, body string }{
		{"tools/call", http.MethodPost, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"s__t","arguments":{}}}`},
		{"tools/list", http.MethodPost, `{"jsonrpc":"2.0","id":12,"method":"tools/list"}`},
		{"meta-tool", http.MethodPost, `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"activate","arguments":{"targets":["s__t"]}}}`},
		{"ping", http.MethodPost, `{"jsonrpc":"2.0","id":"p","method":"ping"}`},
		{"prompts/list", http.MethodPost, `{"jsonrpc":"2.0","id":14,"method":"prompts/list"}`},
		{"extension method", http.MethodPost, `{"jsonrpc":"2.0","id":15,"method":"x/echo"}`},
		{"resources/subscribe", http.MethodPost, `{"jsonrpc":"2.0","id":16,"method":"resources/subscribe","params":{"uri":"demo://doc"}}`},
		{"notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`},
		// Not what the front end reads as a request: mcp-go refuses it.
		{"unparsed", http.MethodPost, `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":3}}`},
		{"GET stream", http.MethodGet, ``},
		{"DELETE", http.MethodDelete, ``},
	}
	refused := func(t *testing.T, session string) {
		t.Helper()
		for _, rq := range requests {
			e := do(t, rq.method, url, rq.body, legacyHeaders(session))
			if e.status != http.StatusNotFound {
				t.Errorf("%s under session %q: %d %q; want 404", rq.name, session, e.status, e.body)
				continue
			}
			if rq.name == "unparsed" {
				continue // mcp-go's own 404
			}
			if err := e.rpcError(t); err == nil || err.Code != -32001 || !strings.Contains(err.Message, "initialize") {
				t.Errorf("%s under session %q: %q; want a JSON-RPC error telling to initialize", rq.name, session, e.body)
			}
		}
	}

	live := initSession(t, url)
	for _, bogus := range []string{"mcp-session-3f6b8c2e-1d4a-4f5e-9b7c-0a1b2c3d4e5f", "bogus"} {
		t.Run("never issued "+bogus, func(t *testing.T) { refused(t, bogus) })
	}
	if n := fe.Disclosure().Sessions(); n != 0 {
		t.Errorf("%d disclosure sessions kept for ids never issued", n)
	}
	if got := fe.subscribers("demo://doc"); len(got) != 0 {
		t.Errorf("subscribers recorded for ids never issued: %v", got)
	}

	// The live session works, until it ends.
	if e := do(t, http.MethodPost, url, requests[0].body, legacyHeaders(live)); e.status != http.StatusOK || e.rpcError(t) != nil {
		t.Fatalf("tools/call in a live session: %d %q", e.status, e.body)
	}
	if e := do(t, http.MethodDelete, url, "", legacyHeaders(live)); e.status != http.StatusOK {
		t.Fatalf("DELETE: %d %q", e.status, e.body)
	}
	t.Run("terminated", func(t *testing.T) { refused(t, live) })

	// initialize under an old id starts a new session.
	if e := do(t, http.MethodPost, url, initBody, legacyHeaders(live)); e.status != http.StatusOK || e.header.Get("Mcp-Session-Id") == "" || e.header.Get("Mcp-Session-Id") == live {
		t.Errorf("initialize with an ended session's id: %d %q, session %q", e.status, e.body, e.header.Get("Mcp-Session-Id"))
	}

	// A 2026-07-28 request has no session: the header means nothing.
	modern := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Session-Id": live, "Mcp-Method": "tools/call", "Mcp-Name": "s__t"}
	body := `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"s__t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	if e := do(t, http.MethodPost, url, body, modern); e.status != http.StatusOK || e.rpcError(t) != nil {
		t.Errorf("2026-07-28 tools/call with an ended session's id: %d %q", e.status, e.body)
	}
}

// TestSessionsExpire: a session unused for SessionIdle ends as a DELETE
// would end it (404 next time, its activations and mcp-go's session gone);
// one used meanwhile stays, and so does one listening on its GET stream,
// however long ago its last request was. Time passes by moving the
// sessions' last uses and the last sweep back (pass): with a short real
// limit, a loaded machine can hold a session that is in use unused for
// that long between two of the test's requests.
func TestSessionsExpire(t *testing.T) {
	const idle = time.Hour
	fe := New(echoRouter{}, Options{SessionIdle: idle})
	url := serveOneTool(t, fe)
	ping := func(id string) int {
		return do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, legacyHeaders(id)).status
	}
	// pass makes d go by for the front end: every session was last used,
	// and sessions were last swept, d earlier than they were.
	pass := func(d time.Duration) {
		fe.sessions.Range(func(_, v any) bool {
			v.(*session).use.used.Add(-d.Nanoseconds())
			return true
		})
		fe.swept.Add(-d.Nanoseconds())
	}

	unused, used, listening := initSession(t, url), initSession(t, url), initSession(t, url)
	if _, ok := fe.clients.Load(unused); !ok {
		t.Fatal("mcp-go does not know the unused session before it expired")
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for k, v := range legacyHeaders(listening) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	before := streamCount(fe)
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); streamCount(fe) == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the GET stream of the listening session did not open within 30s")
		}
	}

	// Two thirds of the limit go by, and the session in use is used; as
	// much again, and the unused one has been unused for longer than the
	// limit, the used one for less.
	pass(2 * idle / 3)
	if got := ping(used); got != http.StatusOK {
		t.Fatalf("ping of a session unused for %v (limit %v): %d", 2*idle/3, idle, got)
	}
	pass(2 * idle / 3)
	if got := ping(unused); got != http.StatusNotFound {
		t.Fatalf("ping of a session unused for %v (limit %v): %d, want 404", 4*idle/3, idle, got)
	}
	if _, ok := fe.clients.Load(unused); ok {
		t.Error("mcp-go still has the expired session")
	}
	if got := ping(used); got != http.StatusOK {
		t.Errorf("ping of a session used %v ago (limit %v): %d", 2*idle/3, idle, got)
	}
	if got := ping(listening); got != http.StatusOK {
		t.Errorf("ping of a session listening on its GET stream since %v ago: %d", 4*idle/3, got)
	}
}

// TestStreamsEnd: a GET stream ends when the token it was opened with is
// revoked (SetAccess, as a reload does), and when its session is deleted;
// a stream whose token is still accepted stays open.
func TestStreamsEnd(t *testing.T) {
	fe := New(echoRouter{}, Options{HTTP: HTTPOptions{Tokens: []string{"old", "kept"}}})
	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close) // after t.Context ends the stream still open
	url := ts.URL + "/mcp"
	with := func(h map[string]string, token string) map[string]string {
		h["Authorization"] = "Bearer " + token
		return h
	}
	session := func(token string) string {
		e := do(t, http.MethodPost, url, initBody, with(map[string]string{}, token))
		id := e.header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("initialize: %d %q", e.status, e.body)
		}
		do(t, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, with(legacyHeaders(id), token))
		return id
	}
	// listen opens the session's GET stream and returns a channel closed
	// when the stream ends.
	listen := func(id, token string) <-chan struct{} {
		ended := make(chan struct{})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		for k, v := range with(legacyHeaders(id), token) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "text/event-stream")
		before := streamCount(fe)
		go func() {
			defer close(ended)
			// mcp-go sends the stream's headers with its first event.
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
		return ended
	}
	waitEnd := func(what string, ended <-chan struct{}) {
		t.Helper()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the stream is still open", what)
		}
	}
	revoked, kept := listen(session("old"), "old"), listen(session("kept"), "kept")
	fe.SetAccess(HTTPOptions{Tokens: []string{"kept", "new"}})
	waitEnd("token revoked", revoked)
	select {
	case <-kept:
		t.Fatal("a stream whose token is still accepted ended")
	case <-time.After(200 * time.Millisecond):
	}

	id := session("kept")
	deleted := listen(id, "kept")
	if e := do(t, http.MethodDelete, url, "", with(legacyHeaders(id), "kept")); e.status != http.StatusOK {
		t.Fatalf("DELETE: %d %q", e.status, e.body)
	}
	waitEnd("session deleted", deleted)
}

// streamCount is the number of long-lived streams fe serves.
func streamCount(fe *Server) int {
	n := 0
	fe.streams.Range(func(any, any) bool { n++; return true })
	return n
}

// serveOneTool gives fe a catalog of one tool, s__t, serves it over HTTP
// until the test ends and returns its endpoint's URL (.../mcp).
func serveOneTool(t *testing.T, fe *Server) string {
	t.Helper()
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
