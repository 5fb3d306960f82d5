package frontend

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSessionLimit: past Options.MaxSessions an initialize is refused with
// 503 and a JSON-RPC error naming the limit and the setting; mcp-go never
// sees it. A session ended (DELETE) gives its place back, and so does one
// whose client sent nothing after initialize once UnconfirmedIdle went by,
// while a session in use stays. Time passes as in TestSessionsExpire.
func TestSessionLimit(t *testing.T) {
	const unconfirmed = time.Hour
	fe := New(echoRouter{}, Options{MaxSessions: 2, UnconfirmedIdle: unconfirmed})
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"
	pass := func(d time.Duration) {
		fe.sessions.Range(func(_, v any) bool {
			v.(*session).use.used.Add(-d.Nanoseconds())
			return true
		})
		fe.swept.Add(-d.Nanoseconds())
	}
	clients := func() int {
		n := 0
		fe.clients.Range(func(any, any) bool { n++; return true })
		return n
	}
	ping := func(id string) int {
		return do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, legacyHeaders(id)).status
	}

	used := initSession(t, url)
	e := do(t, http.MethodPost, url, initBody, nil) // no notifications/initialized, nothing else
	silent := e.header.Get("Mcp-Session-Id")
	if e.status != http.StatusOK || silent == "" {
		t.Fatalf("second initialize: %d %q", e.status, e.body)
	}
	before := clients()
	e = do(t, http.MethodPost, url, initBody, nil)
	if e.status != http.StatusServiceUnavailable || e.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize past the limit of 2: %d %q, session %q; want 503 and no session", e.status, e.body, e.header.Get("Mcp-Session-Id"))
	}
	if rpcErr := e.rpcError(t); rpcErr == nil || !strings.Contains(rpcErr.Message, "at most 2 sessions") || !strings.Contains(rpcErr.Message, "limits.max_sessions") {
		t.Errorf("refusal does not name the limit and its setting: %q", e.body)
	}
	if e.header.Get("Retry-After") == "" {
		t.Error("refusal has no Retry-After")
	}
	if got := clients(); got != before {
		t.Errorf("mcp-go registered the refused session: %d sessions, had %d", got, before)
	}

	// The silent session ends once UnconfirmedIdle went by; the used one,
	// as long unused, does not (its limit is SessionIdle, 24 h).
	pass(unconfirmed + time.Minute)
	e = do(t, http.MethodPost, url, initBody, nil)
	third := e.header.Get("Mcp-Session-Id")
	if e.status != http.StatusOK || third == "" {
		t.Fatalf("initialize after the silent session's %v went by: %d %q", unconfirmed, e.status, e.body)
	}
	if got := ping(silent); got != http.StatusNotFound {
		t.Errorf("ping of a session silent for longer than %v after initialize: %d, want 404", unconfirmed, got)
	}
	if got := ping(used); got != http.StatusOK {
		t.Errorf("ping of a used session unused for %v: %d", unconfirmed+time.Minute, got)
	}
	// A DELETE gives a place back.
	if got := do(t, http.MethodPost, url, initBody, nil).status; got != http.StatusServiceUnavailable {
		t.Fatalf("initialize past the limit again: %d, want 503", got)
	}
	if got := do(t, http.MethodDelete, url, "", legacyHeaders(third)).status; got != http.StatusOK {
		t.Fatalf("DELETE: %d", got)
	}
	if e := do(t, http.MethodPost, url, initBody, nil); e.status != http.StatusOK {
		t.Fatalf("initialize after a DELETE: %d %q", e.status, e.body)
	}
	if got := fe.nsessions.Load(); got != 2 {
		t.Errorf("sessions counted: %d, want 2", got)
	}
}

// TestInitializeSizeBounded: an initialize whose clientInfo or
// capabilities are larger than any client sends is refused with invalid
// params (HTTP 400) saying what is too large; no session is kept.
func TestInitializeSizeBounded(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"
	huge := strings.Repeat("x", 1<<20)
	for name, body := range map[string]string{
		"clientInfo":   `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + huge + `","version":"1"}}}`,
		"capabilities": `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"x":"` + huge + `"}},"clientInfo":{"name":"t","version":"1"}}}`,
	} {
		e := do(t, http.MethodPost, url, body, nil)
		if e.status != http.StatusBadRequest || e.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("initialize with a 1 MiB %s: %d, session %q; want 400 and no session", name, e.status, e.header.Get("Mcp-Session-Id"))
			continue
		}
		if rpcErr := e.rpcError(t); rpcErr == nil || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, name) {
			t.Errorf("initialize with a 1 MiB %s: error %q does not name it", name, e.body)
		}
	}
	if got := fe.nsessions.Load(); got != 0 {
		t.Errorf("sessions counted after refused initializes: %d", got)
	}
	if e := do(t, http.MethodPost, url, initBody, nil); e.status != http.StatusOK {
		t.Errorf("a plain initialize: %d %q", e.status, e.body)
	}
}
