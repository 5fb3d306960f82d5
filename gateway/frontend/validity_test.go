package frontend

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestMissingSession: a 2025-11-25 request, notification, GET or DELETE
// without an Mcp-Session-Id is answered 400 Bad Request saying what to
// send (404 would tell the client its session ended), whatever the
// request; initialize needs none, and neither does any 2026-07-28
// request, which has no session by design.
func TestMissingSession(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	url := serveOneTool(t, fe)
	for _, c := range []struct{ name, method, body, version string }{
		{"tools/list", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-11-25"},
		{"tools/call", http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s__t","arguments":{}}}`, "2025-11-25"},
		{"ping, no version header", http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "-"},
		{"a notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "2025-11-25"},
		{"GET", http.MethodGet, ``, "2025-11-25"},
		{"GET, no version header", http.MethodGet, ``, "-"},
		{"DELETE", http.MethodDelete, ``, "2025-11-25"},
	} {
		e := do(t, c.method, url, c.body, map[string]string{"MCP-Protocol-Version": c.version})
		if e.status != http.StatusBadRequest || !strings.Contains(e.body, "Mcp-Session-Id") || !strings.Contains(e.body, "initialize") {
			t.Errorf("%s without a session: %d %q; want 400 saying to send initialize and its Mcp-Session-Id", c.name, e.status, e.body)
		}
		if c.method == http.MethodPost && strings.Contains(c.body, `"id"`) {
			if re := e.rpcError(t); re == nil || re.Code != sdk.CodeInvalidRequest {
				t.Errorf("%s without a session: %q; want a JSON-RPC Invalid Request error", c.name, e.body)
			}
		}
	}
	if e := do(t, http.MethodPost, url, initBody, nil); e.status != http.StatusOK || e.header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize without a session: %d %q", e.status, e.body)
	}
	modern := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{`+modernMetaOf("")+`}}`, modern); e.status != http.StatusOK || e.rpcError(t) != nil {
		t.Errorf("2026-07-28 tools/list (no session by design): %d %q", e.status, e.body)
	}
	modern["Mcp-Method"], modern["Mcp-Name"] = "tools/call", "s__t"
	if e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"s__t","arguments":{},`+modernMetaOf("")+`}}`, modern); e.status != http.StatusOK || e.rpcError(t) != nil {
		t.Errorf("2026-07-28 tools/call (no session by design): %d %q", e.status, e.body)
	}
}

// TestInvalidMessages: messages MCP does not allow are refused as what
// they are, over HTTP and over stdio alike: a request with a null id, a
// message with an id but neither method nor result nor error, JSON that
// is not an object, and a notification sent with an id are Invalid
// Request (-32600); tools/call arguments that are not an object are
// invalid params (-32602) saying so, and a list cursor the gateway did not
// issue is refused with the gateway's own words.
func TestInvalidMessages(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	url := serveOneTool(t, fe)
	sess := initSession(t, url)
	stdio := serveStdio(t, fe)
	cases := []struct {
		name, body, id string
		code           int64
		says           string
	}{
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", sdk.CodeInvalidRequest, "id"},
		{"id without method", `{"jsonrpc":"2.0","id":16}`, "16", sdk.CodeInvalidRequest, "method"},
		{"a JSON string", `"just a string"`, "null", sdk.CodeInvalidRequest, "object"},
		{"a JSON number", `42`, "null", sdk.CodeInvalidRequest, "object"},
		{"a notification with an id", `{"jsonrpc":"2.0","id":17,"method":"notifications/initialized"}`, "17", sdk.CodeInvalidRequest, "notification"},
		{"string arguments", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"s__t","arguments":"x=1"}}`, "18", sdk.CodeInvalidParams, "arguments must be an object"},
		{"array arguments", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"s__t","arguments":[1]}}`, "19", sdk.CodeInvalidParams, "arguments must be an object"},
		{"meta-tool, number arguments", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"find_tools","arguments":3}}`, "20", sdk.CodeInvalidParams, "arguments must be an object"},
		{"a cursor never issued", `{"jsonrpc":"2.0","id":21,"method":"tools/list","params":{"cursor":"zz"}}`, "21", sdk.CodeInvalidParams, "invalid cursor"},
	}
	check := func(transport, name, answer, id string, code int64, says string) {
		t.Helper()
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *sdk.RPCError   `json:"error"`
		}
		if err := json.Unmarshal([]byte(answer), &msg); err != nil || msg.Error == nil || msg.Error.Code != code ||
			string(msg.ID) != id || !strings.Contains(msg.Error.Message, says) {
			t.Errorf("%s, %s: %q; want error %d with id %s saying %q", transport, name, answer, code, id, says)
		}
	}
	for _, c := range cases {
		e := do(t, http.MethodPost, url, c.body, legacyHeaders(sess))
		body := e.body
		if i := strings.LastIndex(body, "data: "); i >= 0 {
			body = body[i+len("data: "):]
		}
		check("HTTP", c.name, strings.TrimSpace(body), c.id, c.code, c.says)
		if wantStatus := map[int64]int{sdk.CodeInvalidRequest: 400, sdk.CodeInvalidParams: 200}[c.code]; e.status != wantStatus {
			t.Errorf("HTTP, %s: status %d; want %d", c.name, e.status, wantStatus)
		}

		stdio.write(t, c.body)
		// A ping after it: its answer comes after the one to c's line.
		stdio.write(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		stdio.seen = nil
		stdio.answer(t, `"after"`)
		var got []string
		for _, line := range stdio.seen {
			if !strings.Contains(line, `"id":"after"`) && !strings.Contains(line, `"method":"notifications/`) {
				got = append(got, line)
			}
		}
		if len(got) != 1 {
			t.Errorf("stdio, %s: %q; want one answer", c.name, got)
			continue
		}
		check("stdio", c.name, got[0], c.id, c.code, c.says)
	}
	// 2026-07-28: invalid params is HTTP 400.
	modern := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "s__t"}
	e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"s__t","arguments":"x",`+modernMetaOf("")+`}}`, modern)
	check("HTTP 2026-07-28", "string arguments", strings.TrimSpace(e.body), "22", sdk.CodeInvalidParams, "arguments must be an object")
	if e.status != http.StatusBadRequest {
		t.Errorf("HTTP 2026-07-28, string arguments: status %d; want 400", e.status)
	}
}
