package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// interviewRouter's tools ask their client mid-call: "interview" asks for a
// completion, reports progress, then asks for an elicitation, and returns
// both answers; "hang" asks and records how its wait ended.
type interviewRouter struct{ ended chan error }

func (ir interviewRouter) Call(ctx context.Context, it *catalog.Item, _ string, _ json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	switch it.Original {
	case "interview":
		first, err := call.Request(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":5,"x-new":true}`))
		if err != nil {
			return nil, err
		}
		_ = call.Progress(sdk.Progress{Progress: 1, Total: 2})
		second, err := call.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"name?"}`))
		if err != nil {
			return nil, err
		}
		text, _ := json.Marshal(string(first) + " | " + string(second))
		return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`), nil
	case "slow": // asks, then works until cancelled
		if _, err := call.Request(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":1}`)); err != nil {
			return nil, err
		}
		<-ctx.Done()
		ir.ended <- ctx.Err()
		return nil, ctx.Err()
	default: // hang
		_, err := call.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"still there?"}`))
		ir.ended <- err
		return nil, err
	}
}

// modernCall posts a 2026-07-28 tools/call of tool with extra params
// members and returns the JSON-RPC answer (the last SSE event, or the body)
// and the progress it carried.
func modernCall(t *testing.T, url, tool, caps, extra string) (map[string]json.RawMessage, []string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + tool + `"` + extra +
		`,"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	resp, err := postModern(context.Background(), url, "tools/call", tool, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	var last []byte
	var progress []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(buf.String(), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				if strings.Contains(data, `"notifications/progress"`) {
					progress = append(progress, data)
					continue
				}
				last = []byte(data)
			}
		}
	} else {
		last = buf.Bytes()
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(last, &msg); err != nil {
		t.Fatalf("answer %q: %v", buf.String(), err)
	}
	return msg, progress
}

// inputRequired decodes an input_required result.
func inputRequired(t *testing.T, msg map[string]json.RawMessage) (requests map[string]struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}, state string) {
	t.Helper()
	var res struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(msg["result"], &res); err != nil || res.ResultType != "input_required" || res.RequestState == "" {
		t.Fatalf("want an input_required result, got %s %s", msg["result"], msg["error"])
	}
	return res.InputRequests, res.RequestState
}

// TestRoundTrip: a 2026-07-28 client that declared sampling and
// elicitation gets each request of the running call as an input_required
// answer, and its retries (inputResponses, requestState) resume the same
// call, which ends with both answers; progress rides the exchange that is
// attached when it is sent.
func TestRoundTrip(t *testing.T) {
	fe := New(interviewRouter{ended: make(chan error, 1)}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"interview","inputSchema":{"type":"object"}}`),
	}}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	caps := `{"sampling":{},"elicitation":{}}`

	msg, _ := modernCall(t, ts.URL+"/mcp", "s__interview", caps, "")
	requests, state := inputRequired(t, msg)
	if len(requests) != 1 || requests["i1"].Method != "sampling/createMessage" || !strings.Contains(string(requests["i1"].Params), `"x-new":true`) {
		t.Fatalf("first round asks %+v", requests)
	}
	if string(msg["id"]) != "9" {
		t.Errorf("answer id %s", msg["id"])
	}
	// A retry without the answer is asked again.
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__interview", caps, `,"requestState":"`+state+`"`)
	if again, _ := inputRequired(t, msg); again["i1"].Method != "sampling/createMessage" {
		t.Fatalf("a retry without answers was asked %+v", again)
	}
	msg, progress := modernCall(t, ts.URL+"/mcp", "s__interview", caps,
		`,"requestState":"`+state+`","inputResponses":{"i1":{"role":"assistant","content":{"type":"text","text":"four"},"model":"m"}}`)
	requests, state2 := inputRequired(t, msg)
	if len(requests) != 1 || requests["i2"].Method != "elicitation/create" {
		t.Fatalf("second round asks %+v", requests)
	}
	if len(progress) != 1 || !strings.Contains(progress[0], `"progressToken":"p"`) {
		t.Errorf("progress of the second exchange: %v", progress)
	}
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__interview", caps,
		`,"requestState":"`+state2+`","inputResponses":{"i2":{"action":"accept","content":{"name":"Ada"}}}`)
	var res struct {
		ResultType string `json:"resultType"`
		Content    []struct{ Text string }
	}
	if err := json.Unmarshal(msg["result"], &res); err != nil || res.ResultType != "complete" || len(res.Content) != 1 {
		t.Fatalf("final answer %s %s", msg["result"], msg["error"])
	}
	if want := `{"role":"assistant","content":{"type":"text","text":"four"},"model":"m"} | {"action":"accept","content":{"name":"Ada"}}`; res.Content[0].Text != want {
		t.Errorf("the tool saw %q; want %q", res.Content[0].Text, want)
	}
	// The call is over: its state names nothing now.
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__interview", caps, `,"requestState":"`+state2+`","inputResponses":{}`)
	if !strings.Contains(string(msg["error"]), "names no call waiting for input") {
		t.Errorf("a retry after the end: %s %s", msg["result"], msg["error"])
	}
	if n := fe.parked.Load(); n != 0 {
		t.Errorf("%d requests still counted as waiting", n)
	}
}

// TestRoundTripRefusals: a state the gateway never gave, or given for
// another tool, is an invalid-params error; a client that declared no
// capability is not asked (the tool sees why).
func TestRoundTripRefusals(t *testing.T) {
	ended := make(chan error, 1)
	fe := New(interviewRouter{ended: ended}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"interview","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"other","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"}}`),
	}}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()

	msg, _ := modernCall(t, ts.URL+"/mcp", "s__interview", `{"sampling":{}}`, `,"requestState":"sg1.forged"`)
	if !strings.Contains(string(msg["error"]), "-32602") || !strings.Contains(string(msg["error"]), "names no call waiting") {
		t.Errorf("forged state: %s %s", msg["result"], msg["error"])
	}
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__interview", `{"sampling":{}}`, "")
	_, state := inputRequired(t, msg)
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__other", `{"sampling":{}}`, `,"requestState":"`+state+`"`)
	if !strings.Contains(string(msg["error"]), "belongs to a call of s__interview") {
		t.Errorf("state of another tool: %s %s", msg["result"], msg["error"])
	}
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__interview", `{}`, "")
	if !strings.Contains(string(msg["error"]), "did not declare the sampling capability") {
		t.Errorf("no capability declared: %s %s", msg["result"], msg["error"])
	}

	// Two retries of one state at once: the second is refused, and the
	// first keeps the call (it is cancelled when its client goes away).
	msg, _ = modernCall(t, ts.URL+"/mcp", "s__slow", `{"sampling":{}}`, "")
	_, state = inputRequired(t, msg)
	first, cancelFirst := context.WithCancel(context.Background())
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"s__slow","requestState":"` + state + `","inputResponses":{"i1":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
		if resp, err := postModern(first, ts.URL+"/mcp", "tools/call", "s__slow", body); err == nil {
			resp.Body.Close()
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		msg, _ = modernCall(t, ts.URL+"/mcp", "s__slow", `{"sampling":{}}`, `,"requestState":"`+state+`"`)
		if strings.Contains(string(msg["error"]), "is being answered by another request") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a second retry of a state being answered: %s %s", msg["result"], msg["error"])
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancelFirst()
	<-firstDone
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Error("the call was not cancelled when the retry's client went away")
	}
}

// TestRoundTripAbandoned: a parked call whose client never comes back is
// cancelled after the park timeout, and then forgotten.
func TestRoundTripAbandoned(t *testing.T) {
	ended := make(chan error, 1)
	fe := New(interviewRouter{ended: ended}, Options{})
	fe.rtLimits = roundTripLimits{park: 100 * time.Millisecond, keep: 50 * time.Millisecond}
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"hang","inputSchema":{"type":"object"}}`),
	}}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	msg, _ := modernCall(t, ts.URL+"/mcp", "s__hang", `{"elicitation":{}}`, "")
	_, state := inputRequired(t, msg)
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the abandoned call's request returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned call was never cancelled")
	}
	var gone atomic.Bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, ok := fe.roundTrips.Load(state); !ok {
			gone.Store(true)
			break
		}
	}
	if !gone.Load() {
		t.Error("the abandoned call is still held")
	}
}

// promptRouter's prompt asks its client for a name, and its resource asks
// for roots, mid-request.
type promptRouter struct{}

func (promptRouter) Call(ctx context.Context, it *catalog.Item, method string, _ json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if method == "resources/read" {
		roots, err := call.Request(ctx, "roots/list", nil)
		if err != nil {
			return nil, err
		}
		text, _ := json.Marshal(string(roots))
		return json.RawMessage(`{"contents":[{"uri":"demo://r","text":` + string(text) + `}]}`), nil
	}
	a, err := call.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"whom?"}`))
	if err != nil {
		return nil, err
	}
	text, _ := json.Marshal("greet " + string(a))
	return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":` + string(text) + `}}]}`), nil
}

// modernPost posts a 2026-07-28 request of method with params (JSON
// members, _meta added) and returns the JSON-RPC answer.
func modernPost(t *testing.T, url, method, name, members, caps string) map[string]json.RawMessage {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":4,"method":"` + method + `","params":{` + members +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	resp, err := postModern(context.Background(), url, method, name, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	last := buf.Bytes()
	for _, line := range strings.Split(buf.String(), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			last = []byte(data)
		}
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(last, &msg); err != nil {
		t.Fatalf("%s answer %q: %v", method, buf.String(), err)
	}
	return msg
}

// TestRoundTripPromptAndResource: prompts/get and resources/read, which
// mcp-go dispatches, take part in multi round-trip requests too.
func TestRoundTripPromptAndResource(t *testing.T) {
	fe := New(promptRouter{}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"greet"}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"demo://r","name":"r"}`)},
	}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"
	caps := `{"elicitation":{},"roots":{}}`

	msg := modernPost(t, url, "prompts/get", "s__greet", `"name":"s__greet"`, caps)
	requests, state := inputRequired(t, msg)
	if requests["i1"].Method != "elicitation/create" {
		t.Fatalf("prompts/get asks %+v", requests)
	}
	msg = modernPost(t, url, "prompts/get", "s__greet", `"name":"s__greet","requestState":"`+state+`","inputResponses":{"i1":{"action":"accept","content":{"who":"Ada"}}}`, caps)
	if !strings.Contains(string(msg["result"]), `greet {\"action\":\"accept\",\"content\":{\"who\":\"Ada\"}}`) || !strings.Contains(string(msg["result"]), `"resultType":"complete"`) {
		t.Errorf("prompts/get after the answer: %s %s", msg["result"], msg["error"])
	}

	msg = modernPost(t, url, "resources/read", "demo://r", `"uri":"demo://r"`, caps)
	requests, state = inputRequired(t, msg)
	if requests["i1"].Method != "roots/list" {
		t.Fatalf("resources/read asks %+v", requests)
	}
	// The source's roots/list had no params; the input request has {}
	// all the same: the Go SDK fails a call whose input request lacks them.
	if string(requests["i1"].Params) != "{}" {
		t.Errorf("roots/list input request params %q; want {}", requests["i1"].Params)
	}
	msg = modernPost(t, url, "resources/read", "demo://r", `"uri":"demo://r","requestState":"`+state+`","inputResponses":{"i1":{"roots":[{"uri":"file:///w"}]}}`, caps)
	if !strings.Contains(string(msg["result"]), `file:///w`) {
		t.Errorf("resources/read after the answer: %s %s", msg["result"], msg["error"])
	}
}

// postModern POSTs a 2026-07-28 request body of method, naming name in
// the headers that era requires.
func postModern(ctx context.Context, url, method, name, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	return http.DefaultClient.Do(req)
}
