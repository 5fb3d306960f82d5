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

// modernUpstream answers as a 2026-07-28 upstream does: each result has
// resultType and its own serverInfo _meta, beside a _meta member of its
// own.
type modernUpstream struct{}

func (modernUpstream) Call(_ context.Context, _ *catalog.Item, method string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	const meta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"upstream","version":"9"},"trace":"t1"}`
	if method == "resources/read" {
		return json.RawMessage(`{"resultType":"complete","contents":[{"uri":"file:///x","text":"x"}],` + meta + `}`), nil
	}
	return json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"hi"}],` + meta + `}`), nil
}

// TestResultsSpeakTheClientsEra: a 2026-07-28 upstream's result reaches a
// 2025-11-25 session without the members only 2026-07-28 results have
// (resultType, the serverInfo _meta), on the fast path and through
// mcp-go; a 2026-07-28 client gets the gateway's serverInfo, not the
// upstream's. The upstream's own _meta members stay.
func TestResultsSpeakTheClientsEra(t *testing.T) {
	fe := New(modernUpstream{}, Options{Name: "skillgate", Version: "test"})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools:     []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"file:///x","name":"x"}`)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"
	session := initSession(t, url)
	resourceURI := fe.Snapshot().Resources()[0].Name
	result := func(e exchange) map[string]json.RawMessage {
		t.Helper()
		body := e.body
		for _, line := range strings.Split(body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				body = data
			}
		}
		var msg struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Result == nil {
			t.Fatalf("answer %d %q has no result: %v", e.status, e.body, err)
		}
		return msg.Result
	}

	for name, body := range map[string]string{
		"tools/call":          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__t","arguments":{}}}`,
		"tools/call progress": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__t","arguments":{},"_meta":{"progressToken":"p"}}}`,
		"resources/read":      `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + resourceURI + `"}}`,
	} {
		res := result(do(t, http.MethodPost, url, body, legacyHeaders(session)))
		if _, ok := res["resultType"]; ok {
			t.Errorf("2025-11-25 %s: the result has resultType: %s", name, res["resultType"])
		}
		if got := string(res["_meta"]); got != `{"trace":"t1"}` {
			t.Errorf("2025-11-25 %s: _meta %s, want the upstream's own members only", name, got)
		}
	}

	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for name, req := range map[string]struct{ body, method, name string }{
		"tools/call":     {`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__t","arguments":{},` + modernMeta + `}}`, "tools/call", "s__t"},
		"resources/read": {`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + resourceURI + `",` + modernMeta + `}}`, "resources/read", resourceURI},
	} {
		res := result(do(t, http.MethodPost, url, req.body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": req.method, "Mcp-Name": req.name}))
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(res["_meta"], &meta)
		if got := string(meta[serverInfoKey]); got != `{"name":"skillgate","version":"test"}` {
			t.Errorf("2026-07-28 %s: serverInfo %s, want the gateway's", name, got)
		}
		if string(meta["trace"]) != `"t1"` || string(res["resultType"]) != `"complete"` {
			t.Errorf("2026-07-28 %s: the upstream's _meta member or resultType is lost: %v", name, res)
		}
	}
}

func TestLegacyResult(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"content":[]}`, `{"content":[]}`},
		{`{"resultType":"complete","content":[],"ttlMs":5,"cacheScope":"public"}`, `{"content":[]}`},
		{`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`, `{"content":[]}`},
		{`{"content":[],"_meta":{}}`, `{"content":[],"_meta":{}}`},
		{`{"content":[{"text":"\"resultType\""}], "_meta" : {"a":1, "io.modelcontextprotocol/serverInfo":{}}}`, `{"content":[{"text":"\"resultType\""}],"_meta":{"a":1}}`},
		{`{"content":[],"_meta":"odd","resultType":"complete"}`, `{"content":[],"_meta":"odd"}`},
	} {
		if got := string(legacyResult([]byte(tc.in))); got != tc.want {
			t.Errorf("legacyResult(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
