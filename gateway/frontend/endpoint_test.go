package frontend

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestGetWithoutSession: a GET of the endpoint that names no session (a
// legacy HTTP+SSE client, or curl) is refused at once with 400, as a
// request without the session it needs, and what to do, rather than given
// a stream that never carries anything.
func TestGetWithoutSession(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close)
	for _, headers := range []map[string]string{nil, {"MCP-Protocol-Version": "2025-11-25"}, {"MCP-Protocol-Version": "2024-11-05"}} {
		e := do(t, http.MethodGet, ts.URL+"/mcp", "", headers)
		if e.status != http.StatusBadRequest || !strings.Contains(e.body, "Mcp-Session-Id") || !strings.Contains(e.body, "not the legacy HTTP+SSE transport") {
			t.Errorf("GET with %v: %d %q; want 400 saying what to do", headers, e.status, e.body)
		}
	}
	// A session's own GET still opens its stream.
	id := initSession(t, ts.URL+"/mcp")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the session's GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestServerCapabilities: the gateway declares the server capabilities MCP
// defines, in both eras, and not "sampling" or "elicitation", which are a
// client's (it relays those requests to its clients all the same).
func TestServerCapabilities(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	ts := httptest.NewServer(fe.Handler())
	t.Cleanup(ts.Close)
	check := func(era, body string) {
		t.Helper()
		var msg struct {
			Result struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			} `json:"result"`
		}
		if i := strings.LastIndex(body, "data: "); i >= 0 {
			body = body[i+len("data: "):]
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil {
			t.Fatalf("%s: %q: %v", era, body, err)
		}
		caps := msg.Result.Capabilities
		for _, want := range []string{"tools", "resources", "prompts", "logging", "completions"} {
			if caps[want] == nil {
				t.Errorf("%s: capabilities %s lack %s", era, body, want)
			}
		}
		for _, not := range []string{"sampling", "elicitation", "roots"} {
			if caps[not] != nil {
				t.Errorf("%s: capabilities declare %s, a client capability: %s", era, not, body)
			}
		}
	}
	check("2025-11-25", do(t, http.MethodPost, ts.URL+"/mcp", initBody, nil).body)
	resp, err := postModern(t.Context(), ts.URL+"/mcp", "server/discover", "",
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	check("2026-07-28", string(b))
}

// failRouter fails completions of source b with a JSON-RPC error of its
// own and answers the rest as sourceRouter does.
type failRouter struct{ sourceRouter }

func (f *failRouter) Call(ctx context.Context, it *catalog.Item, method string, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if method == "completion/complete" && it.Source == "b" {
		return nil, &sdk.RPCError{Code: -32042, Message: "no completions today", Data: json.RawMessage(`{"retry":false}`)}
	}
	return f.sourceRouter.Call(ctx, it, method, params, call)
}

// TestCompletionErrors: completion/complete for a prompt or template the
// endpoint does not serve is invalid params (-32602), as prompts/get and
// tools/call answer an unknown name, and a source's JSON-RPC error reaches
// the client with its code and data, over HTTP and stdio.
func TestCompletionErrors(t *testing.T) {
	fe, url := profileServer(t, &failRouter{})
	sess := initSession(t, url)
	complete := func(ref string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":` + ref + `,"argument":{"name":"who","value":"A"}}}`
	}
	cases := []struct {
		ref  string
		code int64
		msg  string
	}{
		{`{"type":"ref/prompt","name":"nope__q"}`, sdk.CodeInvalidParams, "prompt 'nope__q' not found"},
		{`{"type":"ref/resource","uri":"demo://nope/{id}"}`, sdk.CodeInvalidParams, "resource template 'demo://nope/{id}' not found"},
		{`{"type":"ref/prompt","name":"b__q"}`, -32042, "no completions today"},
	}
	for _, c := range cases {
		e := do(t, http.MethodPost, url, complete(c.ref), legacyHeaders(sess))
		if re := e.rpcError(t); re == nil || re.Code != c.code || !strings.Contains(re.Message, c.msg) {
			t.Errorf("HTTP %s: %d %q; want error %d saying %q", c.ref, e.status, e.body, c.code, c.msg)
		}
		if c.code == -32042 && !strings.Contains(e.body, `"data":{"retry":false}`) {
			t.Errorf("HTTP %s: %q; want the source's data", c.ref, e.body)
		}
	}
	sc := serveStdio(t, fe)
	for i, c := range cases {
		id := `"c` + string(rune('0'+i)) + `"`
		sc.write(t, strings.Replace(complete(c.ref), `"id":3`, `"id":`+id, 1))
		line := sc.answer(t, id)
		var msg struct {
			Error *sdk.RPCError `json:"error"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Error == nil || msg.Error.Code != c.code || !strings.Contains(msg.Error.Message, c.msg) {
			t.Errorf("stdio %s: %s; want error %d saying %q", c.ref, line, c.code, c.msg)
		}
	}
}
