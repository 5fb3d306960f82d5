package frontend

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// echoRouter answers every call with its params, for front-end tests.
type echoRouter struct{}

func (echoRouter) Call(_ context.Context, it *catalog.Item, method string, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	_ = call.Progress(sdk.Progress{Progress: 1, Total: 1})
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": method + " " + string(params)}}})
	return b, nil
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestHTTPGuard(t *testing.T) {
	fe := New(echoRouter{}, Options{HTTP: HTTPOptions{Tokens: []string{"s3cret"}, BodyCap: 1024, AllowedOrigins: []string{"https://app.example"}}})
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()

	cases := []struct {
		name    string
		body    string
		headers map[string]string
		want    int
		inBody  string
	}{
		{"no token", initBody, nil, 401, "auth.tokens"},
		{"wrong token", initBody, map[string]string{"Authorization": "Bearer nope"}, 401, "Unauthorized"},
		{"wrong scheme", initBody, map[string]string{"Authorization": "Basic s3cret"}, 401, "Unauthorized"},
		{"foreign origin", initBody, map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, 403, "allowed_origins"},
		{"wrong host", initBody, map[string]string{"Authorization": "Bearer s3cret", "Host": "evil.example"}, 403, "Host"},
		{"batch", "[" + initBody + "]", map[string]string{"Authorization": "Bearer s3cret"}, 400, "batches are not supported"},
		{"oversized", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`, map[string]string{"Authorization": "Bearer s3cret"}, 413, "exceeds 1024 bytes"},
		{"allowed origin", initBody, map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://app.example"}, 200, "skillgate"},
		{"loopback origin", initBody, map[string]string{"Authorization": "bearer s3cret", "Origin": "http://localhost:6274"}, 200, "skillgate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			guardCase(t, ts.URL, c.body, c.headers, c.want, c.inBody)
		})
	}
	// A reload rotates the token and moves the cap: the next request
	// follows the new rules.
	fe.SetAccess(HTTPOptions{Tokens: []string{"n3w"}, BodyCap: 4096, AllowedHosts: []string{"gw.example", "tunnel.example:9000"}})
	for _, c := range cases[:3] {
		t.Run("after SetAccess: "+c.name, func(t *testing.T) {
			guardCase(t, ts.URL, c.body, c.headers, c.want, c.inBody)
		})
	}
	for _, c := range []struct {
		name    string
		body    string
		headers map[string]string
		want    int
		inBody  string
	}{
		{"old token", initBody, map[string]string{"Authorization": "Bearer s3cret"}, 401, "Unauthorized"},
		{"new token", initBody, map[string]string{"Authorization": "Bearer n3w"}, 200, "skillgate"},
		{"allowed host", initBody, map[string]string{"Authorization": "Bearer n3w", "Host": "GW.example:8811"}, 200, "skillgate"},
		{"allowed host and port", initBody, map[string]string{"Authorization": "Bearer n3w", "Host": "tunnel.example:9000"}, 200, "skillgate"},
		{"allowed host, other port", initBody, map[string]string{"Authorization": "Bearer n3w", "Host": "tunnel.example:9001"}, 403, "allowed_hosts"},
		{"origin no longer allowed", initBody, map[string]string{"Authorization": "Bearer n3w", "Origin": "https://app.example"}, 403, "allowed_origins"},
		{"bigger cap", strings.Replace(initBody, `"capabilities"`, `"pad":"`+strings.Repeat("x", 2048)+`","capabilities"`, 1), map[string]string{"Authorization": "Bearer n3w"}, 200, "skillgate"},
	} {
		t.Run("after SetAccess: "+c.name, func(t *testing.T) {
			guardCase(t, ts.URL, c.body, c.headers, c.want, c.inBody)
		})
	}
}

// guardCase posts body with headers and wants the status and a part of
// the body.
func guardCase(t *testing.T, url, body string, headers map[string]string, want int, inBody string) {
	t.Helper()
	if e := do(t, http.MethodPost, url+"/mcp", body, headers); e.status != want || !strings.Contains(e.body, inBody) {
		t.Fatalf("status %d body %q; want %d containing %q", e.status, e.body, want, inBody)
	}
}

// send makes one legacy-era (2025-11-25) request to the endpoint at url,
// in session when not empty. Errors are reported with t.Error, so it may run
// off the test's goroutine; it then returns nil.
func send(t *testing.T, method, url, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	return resp
}
