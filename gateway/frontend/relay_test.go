package frontend

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// askRouter's tools make one server-to-client request each, named by the
// tool, and return its answer (or error) as their text.
type askRouter struct{}

func (askRouter) Call(ctx context.Context, it *catalog.Item, _ string, _ json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	var method string
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5,"x-new":true}`)
	switch it.Original {
	case "sample":
		method = "sampling/createMessage"
	case "roots":
		method, params = "roots/list", nil
	case "ping":
		method = "ping"
	}
	res, err := call.Request(ctx, method, params)
	text := string(res)
	if err != nil {
		text = "error: " + err.Error()
		var rpcErr *sdk.RPCError
		if errors.As(err, &rpcErr) {
			text += " " + string(rpcErr.Data)
		}
	}
	return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
}

// TestFastCallRelaysServerRequests: a legacy session that declared sampling
// gets the request as an SSE event of its tools/call answer, with the
// upstream's params unchanged, answers it with a POST of its own (202), and
// the tool sees that answer; errors come back as errors; a capability the
// client did not declare is never asked for.
func TestFastCallRelaysServerRequests(t *testing.T) {
	fe := New(askRouter{}, Options{})
	var tools []json.RawMessage
	for _, n := range []string{"sample", "roots", "ping"} {
		tools = append(tools, json.RawMessage(`{"name":"`+n+`","inputSchema":{"type":"object"}}`))
	}
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{Tools: tools}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()

	open := func(caps string) string {
		t.Helper()
		resp := send(t, http.MethodPost, ts.URL, "", strings.Replace(initBody, `"capabilities":{}`, `"capabilities":`+caps, 1))
		resp.Body.Close()
		id := resp.Header.Get("Mcp-Session-Id")
		// notifications/initialized goes through mcp-go, which drains the session.
		send(t, http.MethodPost, ts.URL, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
		return id
	}
	// call runs tool and answers each server request with answer(request).
	call := func(session, tool string, answer func(req map[string]json.RawMessage) string) (result string, asked int) {
		t.Helper()
		resp := send(t, http.MethodPost, ts.URL, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s__`+tool+`"}}`)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var body strings.Builder
		for sc.Scan() {
			line := sc.Text()
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				if resp.Header.Get("Content-Type") == "application/json" {
					body.WriteString(line)
				}
				continue
			}
			var msg map[string]json.RawMessage
			if err := json.Unmarshal([]byte(data), &msg); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			if _, isReq := msg["method"]; isReq {
				asked++
				r := send(t, http.MethodPost, ts.URL, session, `{"jsonrpc":"2.0","id":`+string(msg["id"])+`,`+answer(msg)+`}`)
				if r.StatusCode != http.StatusAccepted {
					t.Errorf("answer POST: %d, want 202", r.StatusCode)
				}
				r.Body.Close()
				continue
			}
			body.WriteString(data)
		}
		var res struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body.String()), &res); err != nil || len(res.Result.Content) != 1 {
			t.Fatalf("tools/call answer %q: %v", body.String(), err)
		}
		return res.Result.Content[0].Text, asked
	}

	sampling := open(`{"sampling":{},"roots":{"listChanged":true}}`)
	got, asked := call(sampling, "sample", func(req map[string]json.RawMessage) string {
		if !strings.Contains(string(req["params"]), `"x-new":true`) || string(req["method"]) != `"sampling/createMessage"` {
			t.Errorf("request reached the client as %s %s", req["method"], req["params"])
		}
		return `"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m","x-client":1}`
	})
	if asked != 1 || got != `{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m","x-client":1}` {
		t.Errorf("sample: asked %d times, tool saw %q", asked, got)
	}
	got, _ = call(sampling, "sample", func(map[string]json.RawMessage) string {
		return `"error":{"code":-1,"message":"user declined","data":{"why":"no"}}`
	})
	if got != `error: rpc error -1: user declined {"why":"no"}` {
		t.Errorf("declined sample: tool saw %q", got)
	}
	got, asked = call(sampling, "roots", func(map[string]json.RawMessage) string {
		return `"result":{"roots":[{"uri":"file:///w"}]}`
	})
	if asked != 1 || got != `{"roots":[{"uri":"file:///w"}]}` {
		t.Errorf("roots: asked %d times, tool saw %q", asked, got)
	}
	if got, asked = call(sampling, "ping", nil); asked != 0 || !strings.Contains(got, "does not forward ping") {
		t.Errorf("ping: asked %d times, tool saw %q", asked, got)
	}

	plain := open(`{}`)
	if got, asked = call(plain, "sample", nil); asked != 0 || !strings.Contains(got, "did not declare the sampling capability") {
		t.Errorf("undeclared sampling: asked %d times, tool saw %q", asked, got)
	}
	if got, asked = call(plain, "roots", nil); asked != 0 || got != `{"roots":[]}` {
		t.Errorf("undeclared roots: asked %d times, tool saw %q", asked, got)
	}

	// An answer nobody waits for is left to mcp-go.
	if fe.answerFast(sampling, json.RawMessage(`"skillgate-zzz"`), []byte(`{}`)) {
		t.Error("a stray answer was taken by the fast path")
	}
	// An answer on another session is not this call's.
	if fe.answerFast(plain, json.RawMessage(`"skillgate-1"`), []byte(`{}`)) {
		t.Error("an answer of the wrong session was taken")
	}
}
