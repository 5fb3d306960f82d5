package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// verdict is what a client learns of how a request was judged: the HTTP
// status, and the answer's id, error code and whether it has a result (or
// the text of a plain HTTP error).
func verdict(t *testing.T, e exchange) string {
	t.Helper()
	if !strings.Contains(e.header.Get("Content-Type"), "json") && !strings.Contains(e.header.Get("Content-Type"), "event-stream") {
		return fmt.Sprintf("%d %q", e.status, e.body)
	}
	body := e.body
	for _, line := range strings.Split(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			body = data
		}
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *sdk.RPCError   `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("answer %d %q: %v", e.status, e.body, err)
	}
	var code int64
	if msg.Error != nil {
		code = msg.Error.Code
	}
	return fmt.Sprintf("%d id=%s error=%d result=%v", e.status, msg.ID, code, len(msg.Result) > 0)
}

// TestFastPathsJudgeAsMCPGo: a request the front end would answer itself
// (tools/list, tools/call, an extension method, a cancellation) but that
// mcp-go would judge otherwise — a Content-Type that is not JSON, another
// JSON-RPC version, an id MCP does not allow — is answered as mcp-go
// answers it: same HTTP status, same JSON-RPC error code and id, in both
// eras. mcp-go itself, serving the same front end's server, is the oracle,
// but for what the front end refuses on purpose (validity.go): a request
// with a null id, which mcp-go takes for a notification, is Invalid
// Request.
func TestFastPathsJudgeAsMCPGo(t *testing.T) {
	fe := New(echoRouter{}, Options{Methods: map[string]Method{
		"x/echo": func(context.Context, json.RawMessage, sdk.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		},
	}})
	url := serveOneTool(t, fe)
	oracle := httptest.NewServer(server.NewStreamableHTTPServer(fe.mcp, server.WithDisableLocalhostProtection(true), server.WithSessionIdManager(sessionIDs{fe})))
	defer oracle.Close()
	session := initSession(t, url)

	const modernMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	variants := []struct{ name, jsonrpc, id, contentType string }{
		{"plain", `"jsonrpc":"2.0"`, `1`, ""},
		{"string id", `"jsonrpc":"2.0"`, `"a"`, ""},
		{"negative id", `"jsonrpc":"2.0"`, `-3`, ""},
		{"text/plain", `"jsonrpc":"2.0"`, `1`, "text/plain"},
		{"no content type", `"jsonrpc":"2.0"`, `1`, "-"},
		{"json with charset", `"jsonrpc":"2.0"`, `1`, "application/json; charset=utf-8"},
		{"json in capitals", `"jsonrpc":"2.0"`, `1`, "Application/JSON"},
		{"version 1.0", `"jsonrpc":"1.0"`, `1`, ""},
		{"no version", `"x":0`, `1`, ""},
		{"null version", `"jsonrpc":null`, `1`, ""},
		{"numeric version", `"jsonrpc":2`, `1`, ""},
		{"escaped version", `"jsonrpc":"2\u002e0"`, `1`, ""},
		{"version twice, other case", `"jsonrpc":"2.0","JSONRPC":"1.0"`, `1`, ""},
		{"null id", `"jsonrpc":"2.0"`, `null`, ""},
		{"true id", `"jsonrpc":"2.0"`, `true`, ""},
		{"object id", `"jsonrpc":"2.0"`, `{}`, ""},
		{"array id", `"jsonrpc":"2.0"`, `[1]`, ""},
		{"fraction id", `"jsonrpc":"2.0"`, `1.5`, ""},
		{"exponent id", `"jsonrpc":"2.0"`, `1e3`, ""},
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, method := range []string{"tools/list", "tools/call", "x/echo", "notifications/cancelled"} {
			for _, v := range variants {
				params := `"name":"s__t","arguments":{}`
				if method == "notifications/cancelled" {
					params = `"requestId":99`
				}
				if era == "2026-07-28" {
					params += modernMeta
				}
				id := `"id":` + v.id + `,`
				if method == "notifications/cancelled" {
					id = ""
				}
				body := `{` + v.jsonrpc + `,` + id + `"method":"` + method + `","params":{` + params + `}}`
				headers := legacyHeaders(session)
				if era == "2026-07-28" {
					headers = map[string]string{"MCP-Protocol-Version": era, "Mcp-Method": method, "Mcp-Name": "s__t"}
				}
				if v.contentType != "" {
					headers["Content-Type"] = v.contentType
				}
				got := verdict(t, do(t, http.MethodPost, url, body, headers))
				want := verdict(t, do(t, http.MethodPost, oracle.URL+"/mcp", body, headers))
				if v.name == "null id" && v.contentType == "" && method != "notifications/cancelled" {
					want = "400 id=null error=-32600 result=false"
				}
				if method == "x/echo" && strings.Contains(want, "error=-32601") {
					// mcp-go knows no extension method: only its
					// refusals of the request itself are compared.
					continue
				}
				if got != want {
					t.Errorf("%s %s, %s:\n front end %s\n    mcp-go %s", era, method, v.name, got, want)
				}
			}
		}
	}
}
