package frontend

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// bigID is an integer id a float64 cannot hold: decoded as one it is
// 9007199254740992.
const bigID = `9007199254740993`

// answerID is the id of the response in an answer (JSON or SSE), or "".
func answerID(body string) string {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "" && len(m.ID) > 0 {
			return string(m.ID)
		}
	}
	return ""
}

// TestLargeIDsKept: a request whose id is an integer a float64 cannot hold
// is answered with that id, exactly, on the paths mcp-go answers as on the
// front end's own: over HTTP in both eras and over stdio. Over stdio such a
// request can also be cancelled.
func TestLargeIDsKept(t *testing.T) {
	snap := catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools:     []json.RawMessage{json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`)},
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"q"}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"demo://s/doc","name":"doc"}`)},
	}}}, catalog.Options{})
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	requests := []struct{ method, params, name string }{
		{"ping", `{}`, ""},
		{"tools/list", `{}`, ""},
		{"tools/call", `{"name":"s__t","arguments":{}}`, "s__t"},
		{"prompts/get", `{"name":"s__q"}`, "s__q"},
		{"resources/read", `{"uri":"demo://s/doc"}`, "demo://s/doc"},
		{"resources/read", `{"uri":"demo://s/none"}`, "demo://s/none"}, // an error
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"s__q"},"argument":{"name":"a","value":""}}`, ""},
	}

	fe := New(&sourceRouter{}, Options{})
	fe.Update(snap)
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"

	t.Run("HTTP 2025-11-25", func(t *testing.T) {
		e := do(t, http.MethodPost, url, strings.Replace(initBody, `"id":1`, `"id":`+bigID, 1), nil)
		if got := answerID(e.body); got != bigID {
			t.Errorf("initialize: answered with id %s: %q", got, e.body)
		}
		session := initSession(t, url)
		for _, viaMCPGo := range []bool{false, true} {
			for _, req := range requests {
				if viaMCPGo {
					fe.notified.Add(1) // a notification mcp-go may hold: the session is served by mcp-go
				}
				e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":`+bigID+`,"method":"`+req.method+`","params":`+req.params+`}`, legacyHeaders(session))
				if got := answerID(e.body); got != bigID {
					t.Errorf("%s (via mcp-go: %v): answered with id %s: %q", req.method, viaMCPGo, got, e.body)
				}
			}
		}
	})
	t.Run("HTTP 2026-07-28", func(t *testing.T) {
		for _, req := range requests {
			params := "{" + modernMeta
			if req.params != `{}` {
				params += "," + req.params[1:]
			} else {
				params += "}"
			}
			headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": req.method}
			if req.name != "" {
				headers["Mcp-Name"] = req.name
			}
			e := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":`+bigID+`,"method":"`+req.method+`","params":`+params+`}`, headers)
			if got := answerID(e.body); got != bigID {
				t.Errorf("%s: answered with id %s: %d %q", req.method, got, e.status, e.body)
			}
		}
	})
	t.Run("stdio", func(t *testing.T) {
		wr := waitRouter{started: make(chan string, 1), ended: make(chan string, 1)}
		sfe := New(wr, Options{})
		sfe.Update(snap)
		c := serveStdio(t, sfe)
		c.write(t, `{"jsonrpc":"2.0","id":`+bigID+`,"method":"ping"}`)
		if got := c.answer(t, bigID); !strings.Contains(got, `"result"`) {
			t.Errorf("ping: %s", got)
		}
		// A call with a large id, and another whose id a float64 rounds
		// to the same, both cancelled: each reaches the source and ends.
		for _, id := range []string{bigID, "9007199254740992"} {
			c.write(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"s__t","arguments":{}}}`)
			select {
			case <-wr.started:
			case <-time.After(10 * time.Second):
				t.Fatalf("call %s never reached the source", id)
			}
		}
		for _, id := range []string{bigID, "9007199254740992"} {
			c.write(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`)
			select {
			case <-wr.ended:
			case <-time.After(10 * time.Second):
				t.Fatalf("call %s was cancelled, but never ended at the source", id)
			}
		}
		c.write(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		c.answer(t, `"after"`)
		for _, line := range c.seen {
			if responds(line, bigID) && !strings.Contains(line, `"result":{}`) {
				t.Errorf("an answer to a cancelled call: %s", line)
			}
		}
	})
}
