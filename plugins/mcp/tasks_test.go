package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestTaskRequiredTool calls server-everything's simulate-research-query,
// which can only be called as a task (SEP-1686): the executor runs the task
// to its end and returns the report as the call's result, relays the
// server's elicitation while the task waits for input, and publishes the
// tool without taskSupport.
func TestTaskRequiredTool(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	h := newHarness(t)
	defs := h.load("everything", map[string]any{"command": argv[0], "args": argv[1:]})
	for _, raw := range defs.Tools {
		var d struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		}
		if json.Unmarshal(raw, &d) != nil {
			t.Fatalf("tool %s", raw)
		}
		if d.Name == "simulate-research-query" && strings.Contains(string(d.Execution), "taskSupport") {
			t.Fatalf("published with taskSupport: %s", raw)
		}
		if !json.Valid(raw) {
			t.Fatalf("not JSON after rewriting: %s", raw)
		}
	}

	rec := &sdktest.Recorder{}
	res := h.mustCall("everything", "simulate-research-query", map[string]any{"topic": "gophers"}, rec)
	got := text(t, res)
	if !strings.Contains(got, "Research Report: gophers") {
		t.Fatalf("result = %q", got)
	}
	// The server ties its result to the task (_meta's related-task); the
	// client made no task call, so that goes, and with it the _meta it was
	// alone in.
	if strings.Contains(string(res), "related-task") || strings.Contains(string(res), `"_meta"`) {
		t.Fatalf("the result still names the task: %s", tailString(string(res), 200))
	}
	// The task's status messages arrive as progress, the first one too
	// (it comes with the task, before any status notification).
	if len(rec.Progresses) == 0 || !strings.HasPrefix(rec.Progresses[0].Message, "Gathering sources") {
		t.Fatalf("progress = %+v", rec.Progresses)
	}

	var asked []string
	rec = &sdktest.Recorder{RequestFunc: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, method)
		if method != "elicitation/create" {
			return nil, errors.New(method)
		}
		return json.RawMessage(`{"action":"accept","content":{"interpretation":"burrowing rodents"}}`), nil
	}}
	got = text(t, h.mustCall("everything", "simulate-research-query", map[string]any{"topic": "gophers", "ambiguous": true}, rec))
	if len(asked) != 1 || !strings.Contains(got, "burrowing rodents") {
		t.Fatalf("asked %v; result %q", asked, got)
	}
}

func TestWithoutTaskSupport(t *testing.T) {
	c := newConn(&source{name: "t"})
	in := []json.RawMessage{
		json.RawMessage(`{"name":"a","execution":{"taskSupport":"required"}}`),
		json.RawMessage(`{ "execution" : { "taskSupport" : "optional" } , "name":"b" }`),
		json.RawMessage(`{"name":"c\"","x":1,"execution":{"taskSupport":"required","other":true},"y":2}`),
		json.RawMessage(`{"name":"d","description":"taskSupport in text only"}`),
		json.RawMessage(`{"name":"e","execution":{"taskSupport":"forbidden"}}`),
	}
	want := []string{
		`{"name":"a"}`,
		`{ "name":"b" }`,
		`{"name":"c\"","x":1,"execution":{"other":true},"y":2}`,
		`{"name":"d","description":"taskSupport in text only"}`,
		`{"name":"e","execution":{"taskSupport":"forbidden"}}`,
	}
	out := c.withoutTaskSupport(in)
	for i := range want {
		if string(out[i]) != want[i] {
			t.Errorf("%d: %s, want %s", i, out[i], want[i])
		}
	}
	for name, req := range map[string]bool{"a": true, "b": false, `c"`: true, "d": false, "e": false} {
		if got := c.needsTask(mustJSON(map[string]any{"name": name})); got != req {
			t.Errorf("needsTask(%q) = %v", name, got)
		}
	}
}

func TestWithoutRelatedTask(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"alone in _meta",
			`{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`,
			`{"content":[]}`},
		{"first of several",
			`{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"},"x":{"big":12345678901234567890}},"isError":false}`,
			`{"content":[],"_meta":{"x":{"big":12345678901234567890}},"isError":false}`},
		{"last of several, spaced",
			`{ "_meta" : { "a" : 1.0 , "io.modelcontextprotocol/related-task" : {"taskId":"t1"} } , "content":[] }`,
			`{ "_meta" : { "a" : 1.0 } , "content":[] }`},
		{"escaped key, twice",
			`{"_meta":{"io.modelcontextprotocol\/related-task":{"taskId":"t1"},"b":"\u00e9","io.modelcontextprotocol/related-task":{}}}`,
			`{"_meta":{"b":"\u00e9"}}`},
		{"only in text", `{"content":[{"type":"text","text":"related-task"}]}`, `{"content":[{"type":"text","text":"related-task"}]}`},
		{"only in a nested _meta", `{"content":[{"type":"text","text":"x","_meta":{"io.modelcontextprotocol/related-task":{}}}]}`,
			`{"content":[{"type":"text","text":"x","_meta":{"io.modelcontextprotocol/related-task":{}}}]}`},
		{"null _meta", `{"_meta":null,"related-task":1}`, `{"_meta":null,"related-task":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(withoutRelatedTask(json.RawMessage(tc.in))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
