package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// start serves a fresh hello executor over in-memory gRPC, as the gateway
// would talk to the plugin process.
func start(t *testing.T) *sdktest.Client {
	t.Helper()
	return sdktest.Start(t, &hello{}, nil)
}

func load(t *testing.T, c *sdktest.Client, source, spec string) sdk.Definitions {
	t.Helper()
	defs, err := c.Load(t.Context(), sdk.LoadRequest{Source: source, Kind: "hello", Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatalf("Load %s: %v", spec, err)
	}
	return defs
}

// toolCall is a tools/call request as the gateway routes it to a source.
func toolCall(source, tool, args string) sdk.CallRequest {
	return sdk.CallRequest{
		Source: source,
		Method: "tools/call",
		Params: json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args)),
	}
}

type result struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func decodeResult(t *testing.T, raw json.RawMessage) result {
	t.Helper()
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return r
}

func TestInfo(t *testing.T) {
	info, err := (&hello{}).Info(t.Context())
	if err != nil || info.Name != "hello" || info.Version == "" || len(info.Kinds) != 1 || info.Kinds[0] != "hello" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestLoad(t *testing.T) {
	c := start(t)
	for _, tc := range []struct {
		name, spec string
		tools      []string
	}{
		{"empty spec offers every tool", ``, []string{"greet", "countdown"}},
		{"null spec offers every tool", `null`, []string{"greet", "countdown"}},
		{"brief example", `{"greeting":"Hello","tools":["greet"]}`, []string{"greet"}},
		{"order kept", `{"tools":["countdown","greet"],"interval":"10ms"}`, []string{"countdown", "greet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defs := load(t, c, "a", tc.spec)
			if len(defs.Tools) != len(tc.tools) {
				t.Fatalf("got %d tools, want %v", len(defs.Tools), tc.tools)
			}
			for i, raw := range defs.Tools {
				// The definition crosses the wire byte for byte.
				if want := toolDefs[tc.tools[i]]; string(raw) != string(want) {
					t.Fatalf("tool %d = %s, want %s", i, raw, want)
				}
			}
		})
	}
}

func TestGreetDefinition(t *testing.T) {
	var tool struct {
		Name        string `json:"name"`
		InputSchema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"inputSchema"`
		OutputSchema map[string]any  `json:"outputSchema"`
		Annotations  map[string]bool `json:"annotations"`
	}
	if err := json.Unmarshal(toolDefs["greet"], &tool); err != nil {
		t.Fatal(err)
	}
	if tool.Name != "greet" || tool.InputSchema.Type != "object" || tool.InputSchema.Properties["name"] == nil ||
		len(tool.InputSchema.Required) != 1 || tool.InputSchema.Required[0] != "name" ||
		tool.OutputSchema["type"] != "object" || !tool.Annotations["readOnlyHint"] {
		t.Fatalf("greet = %s", toolDefs["greet"])
	}
}

func TestLoadInvalidSpec(t *testing.T) {
	c := start(t)
	for _, tc := range []struct{ name, spec, msg string }{
		{"not json", `{greeting`, "invalid spec: invalid character 'g' looking for beginning of object key string"},
		{"not an object", `["greet"]`, "invalid spec: json: cannot unmarshal array into Go value of type main.spec"},
		{"unknown field", `{"greting":"Hi"}`, `invalid spec: json: unknown field "greting"`},
		{"trailing data", `{} {}`, "invalid spec: unexpected data after the spec object"},
		{"unknown tool", `{"tools":["wave"]}`, `invalid spec: unknown tool "wave"; this executor offers "greet" and "countdown"`},
		{"tool twice", `{"tools":["greet","greet"]}`, `invalid spec: tool "greet" is listed twice`},
		{"no tools", `{"tools":[]}`, `invalid spec: tools is empty; list some of "greet" and "countdown", or leave it out for both`},
		{"bad interval", `{"interval":"soon"}`, `invalid spec: interval "soon" is not a duration such as "500ms" or "2s"`},
		{"negative interval", `{"interval":"-1s"}`, `invalid spec: interval "-1s" is not a duration such as "500ms" or "2s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Load(t.Context(), sdk.LoadRequest{Source: "a", Kind: "hello", Spec: json.RawMessage(tc.spec)})
			if !errors.Is(err, sdk.ErrInvalidSpec) || err.Error() != tc.msg {
				t.Fatalf("err = %v, want %q matching ErrInvalidSpec", err, tc.msg)
			}
		})
	}
	t.Run("other kind", func(t *testing.T) {
		_, err := c.Load(t.Context(), sdk.LoadRequest{Source: "a", Kind: "wasm"})
		if !errors.Is(err, sdk.ErrUnsupported) {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
	})
}

func TestGreet(t *testing.T) {
	c := start(t)
	load(t, c, "en", `{"greeting":"Hello","tools":["greet"]}`)
	load(t, c, "fr", `{"greeting":"Bonjour"}`)

	for _, tc := range []struct{ source, want string }{{"en", "Hello, Ada!"}, {"fr", "Bonjour, Ada!"}} {
		t.Run(tc.source, func(t *testing.T) {
			rec := &sdktest.Recorder{}
			raw, err := c.Call(t.Context(), toolCall(tc.source, "greet", `{"name":"Ada"}`), rec)
			if err != nil {
				t.Fatal(err)
			}
			r := decodeResult(t, raw)
			if r.IsError || r.StructuredContent["greeting"] != tc.want {
				t.Fatalf("result = %s", raw)
			}
			if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != fmt.Sprintf(`{"greeting":%q}`, tc.want) {
				t.Fatalf("content = %+v", r.Content)
			}
			if len(rec.Progresses) != 1 || rec.Progresses[0] != (sdk.Progress{Progress: 1, Total: 1, Message: "greeting composed"}) {
				t.Fatalf("progress = %+v", rec.Progresses)
			}
		})
	}

	t.Run("bad arguments are a tool error", func(t *testing.T) {
		for _, args := range []string{`{}`, `null`, `{"name":"  "}`, `{"name":7}`, `{"name":"Ada","age":3}`} {
			raw, err := c.Call(t.Context(), toolCall("en", "greet", args), &sdktest.Recorder{})
			if err != nil {
				t.Fatalf("%s: %v", args, err)
			}
			if r := decodeResult(t, raw); !r.IsError || r.StructuredContent != nil || len(r.Content) != 1 {
				t.Fatalf("%s: result = %s", args, raw)
			}
		}
	})
	t.Run("the tool error says what is wrong", func(t *testing.T) {
		raw, err := c.Call(t.Context(), toolCall("en", "greet", `{"name":"Ada","age":3}`), &sdktest.Recorder{})
		if err != nil {
			t.Fatal(err)
		}
		want := `arguments of tool "greet": unknown field "age"; greet takes {"name": "Ada"}`
		if r := decodeResult(t, raw); len(r.Content) != 1 || r.Content[0].Text != want {
			t.Fatalf("result = %s, want the text %q", raw, want)
		}
	})
}

// TestGreetAda is the test docs/EXECUTORS.md shows.
func TestGreetAda(t *testing.T) {
	c := sdktest.Start(t, &hello{}, nil)
	if _, err := c.Load(t.Context(), sdk.LoadRequest{Source: "a", Kind: "hello", Spec: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	rec := &sdktest.Recorder{}
	res, err := c.Call(t.Context(), sdk.CallRequest{Source: "a", Method: "tools/call",
		Params: json.RawMessage(`{"name":"greet","arguments":{"name":"Ada"}}`)}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), `"greeting":"Hello, Ada!"`) || len(rec.Progresses) != 1 {
		t.Errorf("result %s, progress %+v", res, rec.Progresses)
	}
}

func TestCallErrors(t *testing.T) {
	c := start(t)
	load(t, c, "a", `{"tools":["greet"]}`)
	rpcCode := func(err error) int64 {
		var rpcErr *sdk.RPCError
		if !errors.As(err, &rpcErr) {
			return 0
		}
		return rpcErr.Code
	}
	for _, tc := range []struct {
		name string
		req  sdk.CallRequest
		ok   func(error) bool
	}{
		{"unknown source", toolCall("b", "greet", `{"name":"Ada"}`),
			func(err error) bool { return errors.Is(err, sdk.ErrUnknownSource) }},
		{"unknown tool", toolCall("a", "wave", `{}`),
			func(err error) bool { return rpcCode(err) == sdk.CodeInvalidParams }},
		{"tool the source does not offer", toolCall("a", "countdown", `{}`),
			func(err error) bool { return rpcCode(err) == sdk.CodeInvalidParams }},
		{"bad params", sdk.CallRequest{Source: "a", Method: "tools/call", Params: json.RawMessage(`[]`)},
			func(err error) bool { return rpcCode(err) == sdk.CodeInvalidParams }},
		{"other method", sdk.CallRequest{Source: "a", Method: "resources/read", Params: json.RawMessage(`{"uri":"x"}`)},
			func(err error) bool { return errors.Is(err, sdk.ErrUnsupported) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(t.Context(), tc.req, &sdktest.Recorder{})
			if err == nil || !tc.ok(err) {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

func TestCountdown(t *testing.T) {
	c := start(t)
	load(t, c, "a", `{"interval":"0s"}`)
	rec := &sdktest.Recorder{}
	raw, err := c.Call(t.Context(), toolCall("a", "countdown", `{"from":3}`), rec)
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeResult(t, raw); r.IsError || r.StructuredContent["counted"] != float64(3) {
		t.Fatalf("result = %s", raw)
	}
	want := []sdk.Progress{
		{Progress: 1, Total: 3, Message: "3"},
		{Progress: 2, Total: 3, Message: "2"},
		{Progress: 3, Total: 3, Message: "1"},
	}
	if fmt.Sprint(rec.Progresses) != fmt.Sprint(want) {
		t.Fatalf("progress = %+v, want %+v", rec.Progresses, want)
	}

	raw, err = c.Call(t.Context(), toolCall("a", "countdown", `{"from":0}`), rec)
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeResult(t, raw); !r.IsError {
		t.Fatalf("from 0: result = %s", raw)
	}
}

// observed records what the executor's own Call returned, to show that it
// stopped, not just that the gateway side gave up waiting.
type observed struct {
	*hello
	returned chan error
}

func (o observed) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	res, err := o.hello.Call(ctx, req, call)
	o.returned <- err
	return res, err
}

// cancelOnProgress cancels the call when the first progress report arrives.
type cancelOnProgress struct {
	sdktest.Recorder
	cancel context.CancelFunc
}

func (c *cancelOnProgress) Progress(p sdk.Progress) error {
	_ = c.Recorder.Progress(p)
	c.cancel()
	return nil
}

func TestCountdownCancel(t *testing.T) {
	exec := observed{hello: &hello{}, returned: make(chan error, 1)}
	c := sdktest.Start(t, exec, nil)
	// An hour between steps: only cancellation can end this call.
	load(t, c, "a", `{"interval":"1h"}`)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &cancelOnProgress{cancel: cancel}
	_, err := c.Call(ctx, toolCall("a", "countdown", `{"from":5}`), rec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("gateway side: err = %v, want context.Canceled", err)
	}
	if len(rec.Progresses) != 1 || rec.Progresses[0].Message != "5" {
		t.Fatalf("progress = %+v", rec.Progresses)
	}
	select {
	case err := <-exec.returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("executor side: err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("countdown kept running after its call was cancelled")
	}
}

func TestUnload(t *testing.T) {
	c := start(t)
	load(t, c, "a", ``)
	if err := c.Unload(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(t.Context(), toolCall("a", "greet", `{"name":"Ada"}`), &sdktest.Recorder{}); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Fatalf("call after unload: err = %v", err)
	}
	if err := c.Unload(t.Context(), "a"); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Fatalf("second unload: err = %v", err)
	}
}

// TestConcurrent runs calls while the source is reloaded and other sources
// come and go; run it with -race.
func TestConcurrent(t *testing.T) {
	c := start(t)
	load(t, c, "a", `{"greeting":"Hi","interval":"0s"}`)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				raw, err := c.Call(t.Context(), toolCall("a", "greet", `{"name":"Ada"}`), &sdktest.Recorder{})
				if err != nil {
					t.Error(err)
					return
				}
				// t.Fatal may not run here, off the test goroutine.
				var r result
				if err := json.Unmarshal(raw, &r); err != nil {
					t.Error(err)
					return
				}
				if g := r.StructuredContent["greeting"]; g != "Hi, Ada!" && g != "Hey, Ada!" {
					t.Errorf("greeting = %v", g)
					return
				}
			}
		})
		wg.Go(func() {
			src := fmt.Sprintf("other%d", i)
			if _, err := c.Load(t.Context(), sdk.LoadRequest{Source: src, Kind: "hello"}); err != nil {
				t.Error(err)
				return
			}
			if _, err := c.Load(t.Context(), sdk.LoadRequest{Source: "a", Kind: "hello", Spec: json.RawMessage(`{"greeting":"Hey"}`)}); err != nil {
				t.Error(err)
				return
			}
			if err := c.Unload(t.Context(), src); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
