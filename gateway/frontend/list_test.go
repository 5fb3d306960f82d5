package frontend

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestToolsListIsTheSnapshotsBytes checks the legacy fast path: a known
// session's tools/list is the meta-tools then the snapshot's bytes; an
// unknown or ended session gets no list.
func TestToolsListIsTheSnapshotsBytes(t *testing.T) {
	tool := `{"name":"t","description":"a & b","inputSchema":{"type":"object","x-new":1.50}}`
	fe := New(echoRouter{}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(tool)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()

	do := func(method, session, body string) (int, string, http.Header) {
		t.Helper()
		resp := send(t, method, ts.URL, session, body)
		if resp == nil {
			t.FailNow()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	_, _, h := do(http.MethodPost, "", initBody)
	session := h.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	var metas []string
	for _, n := range disclosure.Names {
		m, _ := disclosure.MetaTool(n)
		metas = append(metas, string(m))
	}
	want := `{"jsonrpc":"2.0","id":"x7","result":{"tools":[` + strings.Join(metas, ",") + "," + strings.Replace(tool, `"name":"t"`, `"name":"s__t"`, 1) + `]}}` + "\n"
	if code, body, _ := do(http.MethodPost, session, `{"jsonrpc":"2.0","id":"x7","method":"tools/list"}`); code != 200 || body != want {
		t.Fatalf("tools/list = %d %q\nwant %q", code, body, want)
	}
	// A session id the gateway did not issue is refused.
	if code, body, _ := do(http.MethodPost, "bogus", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code == 200 || strings.Contains(body, `"s__t"`) {
		t.Fatalf("a bogus session got a list: %d %q", code, body)
	}
	do(http.MethodDelete, session, "")
	if _, ok := fe.sessions.Load(session); ok {
		t.Fatal("ended session still known")
	}
}
