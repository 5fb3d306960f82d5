package frontend

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestReadOddURI: a resources/read of a URI that no URI template
// matches (a raw space) reaches the source with the URI as the client
// sent it, over HTTP in both eras and over stdio; the answer is the
// source's.
func TestReadOddURI(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"demo://{+path}","name":"any"}`)},
	}}}, catalog.Options{}))
	const uri = "demo://dir/my file.md"
	// The echo of the params the source got.
	want := `resources/read {\"uri\":\"` + uri + `\"`
	read := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	}

	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	sess := initSession(t, url)
	if e := do(t, http.MethodPost, url, read("2"), legacyHeaders(sess)); e.status != http.StatusOK || !strings.Contains(e.body, want) {
		t.Errorf("2025-11-25 resources/read %q: %d %s", uri, e.status, e.body)
	}
	modern := `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"` + uri + `",` + modernMetaOf("") + `}}`
	e := do(t, http.MethodPost, url, modern, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri})
	if e.status != http.StatusOK || !strings.Contains(e.body, want) {
		t.Errorf("2026-07-28 resources/read %q: %d %s", uri, e.status, e.body)
	}

	c := serveStdio(t, fe)
	c.write(t, read(`"r"`))
	if got := c.answer(t, `"r"`); !strings.Contains(got, want) {
		t.Errorf("stdio resources/read %q: %s", uri, got)
	}
}
