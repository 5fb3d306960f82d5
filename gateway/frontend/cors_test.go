package frontend

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCORS: a page of an allowed origin can use the endpoint from a
// browser: its preflight is answered (before the token check, as browsers
// send none with it) with the methods and the headers it asked for, and the
// answers to its requests, refusals included, let it read them and the
// session id. Another origin gets 403 and no CORS headers; a request
// without Origin none either.
func TestCORS(t *testing.T) {
	fe := New(echoRouter{}, Options{HTTP: HTTPOptions{Tokens: []string{"s3cret"}, AllowedOrigins: []string{"https://app.example"}}})
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"
	const app = "https://app.example"

	pre := do(t, http.MethodOptions, url, "", map[string]string{"Origin": app, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization,content-type,mcp-session-id,mcp-protocol-version", "Content-Type": "-", "Accept": "-"})
	if pre.status != http.StatusNoContent || pre.header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "authorization") ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "mcp-session-id") {
		t.Errorf("preflight from an allowed origin: %d %v %q", pre.status, pre.header, pre.body)
	}

	e := do(t, http.MethodPost, url, initBody, map[string]string{"Origin": app, "Authorization": "Bearer s3cret"})
	if e.status != http.StatusOK || e.header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(e.header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") || e.header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize from an allowed origin: %d %v", e.status, e.header)
	}
	if e := do(t, http.MethodPost, url, initBody, map[string]string{"Origin": app}); e.status != http.StatusUnauthorized || e.header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("initialize without a token from an allowed origin: %d %v; want 401 the page can read", e.status, e.header)
	}

	for _, method := range []string{http.MethodOptions, http.MethodPost} {
		e := do(t, method, url, initBody, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST", "Authorization": "Bearer s3cret"})
		if e.status != http.StatusForbidden || e.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s from another origin: %d %v; want 403 without CORS headers", method, e.status, e.header)
		}
	}
	if e := do(t, http.MethodPost, url, initBody, map[string]string{"Authorization": "Bearer s3cret"}); e.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a request without Origin got CORS headers: %v", e.header)
	}
}
