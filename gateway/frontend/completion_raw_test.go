package frontend

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// rawCompletion is a source's completion/complete result with the members
// mcp-go's typed mcp.Completion drops (hasMore: false, total: 0, members
// it does not know) and in an order of its own.
const rawCompletion = `{"completion":{"hasMore":false,"values":["x"],"total":0,"note":"kept"},"_meta":{"k":"v"}}`

// rawCompleteRouter answers completion/complete with rawCompletion and the
// rest as sourceRouter does.
type rawCompleteRouter struct{ sourceRouter }

func (r *rawCompleteRouter) Call(ctx context.Context, it *catalog.Item, method string, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if method == "completion/complete" {
		return json.RawMessage(rawCompletion), nil
	}
	return r.sourceRouter.Call(ctx, it, method, params, call)
}

// TestCompletionRawResult: a source's completion/complete result reaches
// the client byte for byte, over HTTP and stdio, for a prompt and a
// resource template.
func TestCompletionRawResult(t *testing.T) {
	fe, url := profileServer(t, &rawCompleteRouter{})
	sess := initSession(t, url)
	refs := []string{`{"type":"ref/prompt","name":"a__q"}`, `{"type":"ref/resource","uri":"demo://a/{id}"}`}
	result := func(body string) string {
		for _, line := range strings.Split(body, "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
			var m struct {
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
				return string(m.Result)
			}
		}
		return ""
	}
	complete := func(id, ref string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"completion/complete","params":{"ref":` + ref + `,"argument":{"name":"who","value":"A"}}}`
	}
	for _, ref := range refs {
		e := do(t, http.MethodPost, url, complete("3", ref), legacyHeaders(sess))
		if got := result(e.body); got != rawCompletion {
			t.Errorf("HTTP %s: result %s; want the source's %s", ref, got, rawCompletion)
		}
	}
	// 2026-07-28: mcp-go adds members of the era's own (resultType); the
	// completion is the source's, byte for byte.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	resp, err := postModern(t.Context(), url, "completion/complete", "a__q",
		`{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{`+meta+`,"ref":`+refs[0]+`,"argument":{"name":"who","value":"A"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got, want map[string]json.RawMessage
	_ = json.Unmarshal([]byte(rawCompletion), &want)
	if err := json.Unmarshal([]byte(result(string(b))), &got); err != nil || string(got["completion"]) != string(want["completion"]) {
		t.Errorf("2026-07-28: answer %s; want the source's completion %s", b, want["completion"])
	}
	sc := serveStdio(t, fe)
	for i, ref := range refs {
		id := `"c` + string(rune('0'+i)) + `"`
		sc.write(t, complete(id, ref))
		if got := result(sc.answer(t, id)); got != rawCompletion {
			t.Errorf("stdio %s: result %s; want the source's %s", ref, got, rawCompletion)
		}
	}
}
