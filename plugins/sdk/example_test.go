package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// shout is a small executor: every source of kind "shout" offers one tool,
// shout, which upper-cases its text argument.
type shout struct {
	mu      sync.Mutex
	sources map[string]bool
}

func (*shout) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "shout", Version: "1.0.0", Kinds: []string{"shout"}}, nil
}

func (s *shout) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	var spec struct{}
	if len(req.Spec) > 0 {
		if err := json.Unmarshal(req.Spec, &spec); err != nil {
			return sdk.Definitions{}, fmt.Errorf("%w: %v", sdk.ErrInvalidSpec, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sources == nil {
		s.sources = make(map[string]bool)
	}
	s.sources[req.Source] = true
	tool := `{"name":"shout","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}`
	return sdk.Definitions{Tools: []json.RawMessage{json.RawMessage(tool)}}, nil
}

func (s *shout) Unload(_ context.Context, source string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sources[source] {
		return fmt.Errorf("%w: %q", sdk.ErrUnknownSource, source)
	}
	delete(s.sources, source)
	return nil
}

func (s *shout) Call(_ context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	s.mu.Lock()
	loaded := s.sources[req.Source]
	s.mu.Unlock()
	if !loaded {
		return nil, fmt.Errorf("%w: %q", sdk.ErrUnknownSource, req.Source)
	}
	if req.Method != "tools/call" {
		return nil, fmt.Errorf("%w: %s", sdk.ErrUnsupported, req.Method)
	}
	tc, err := sdk.ParseToolCall(req)
	if err != nil {
		return nil, err // malformed params: an *sdk.RPCError already
	}
	if tc.Name != "shout" {
		return nil, sdk.UnknownTool(tc.Name)
	}
	var args struct {
		Text string `json:"text"`
	}
	if err := tc.DecodeArguments(&args); err != nil {
		return sdk.ErrorResult(err.Error()), nil // the model reads why and retries
	}
	if err := call.Progress(sdk.Progress{Progress: 1, Total: 1, Message: "shouting"}); err != nil {
		return nil, err
	}
	return sdk.TextResult(strings.ToUpper(args.Text)), nil
}

// An executor is an Executor handed to Serve. Here its methods are called
// in the order the gateway calls them, with an sdktest.Recorder standing in
// for the gateway's side of the call. Tests that should cross the real gRPC
// boundary use sdktest.Start instead.
func Example() {
	ctx := context.Background()
	exec := &shout{}

	info, _ := exec.Info(ctx)
	fmt.Println(info.Name, info.Version, info.Kinds)

	defs, err := exec.Load(ctx, sdk.LoadRequest{Source: "loud", Kind: "shout", Spec: json.RawMessage(`{}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(defs.Tools[0]))

	rec := &sdktest.Recorder{}
	res, err := exec.Call(ctx, sdk.CallRequest{
		Source: "loud",
		Method: "tools/call",
		Params: json.RawMessage(`{"name":"shout","arguments":{"text":"hello"}}`),
	}, rec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("progress %v/%v %s\n", rec.Progresses[0].Progress, rec.Progresses[0].Total, rec.Progresses[0].Message)
	fmt.Println(string(res))
	// Output:
	// shout 1.0.0 [shout]
	// {"name":"shout","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}
	// progress 1/1 shouting
	// {"content":[{"type":"text","text":"HELLO"}]}
}

// A plugin's main hands its executor to Serve, which speaks the go-plugin
// handshake on stdin/stdout and returns when the gateway stops the plugin.
// (Not run: Serve expects to be started by the gateway.)
func ExampleServe() {
	sdk.Serve(&shout{})
}

// Sentinel errors say what kind of failure happened and survive the process
// boundary; an *RPCError reaches the MCP client as that JSON-RPC error.
func Example_errors() {
	ctx := context.Background()
	exec := &shout{}

	_, err := exec.Load(ctx, sdk.LoadRequest{Source: "loud", Kind: "shout", Spec: json.RawMessage(`[1]`)})
	fmt.Println(errors.Is(err, sdk.ErrInvalidSpec), err)

	_, err = exec.Call(ctx, sdk.CallRequest{Source: "quiet", Method: "tools/call"}, &sdktest.Recorder{})
	fmt.Println(errors.Is(err, sdk.ErrUnknownSource), err)

	_, _ = exec.Load(ctx, sdk.LoadRequest{Source: "loud", Kind: "shout", Spec: json.RawMessage(`{}`)})
	_, err = exec.Call(ctx, sdk.CallRequest{Source: "loud", Method: "tools/call", Params: json.RawMessage(`{"name":"whisper"}`)}, &sdktest.Recorder{})
	var rpcErr *sdk.RPCError
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code, rpcErr.Message)
	}
	// Output:
	// true invalid spec: json: cannot unmarshal array into Go value of type struct {}
	// true unknown source: "quiet"
	// -32602 unknown tool "whisper"
}

// A running call can reach back to the gateway: Request asks the MCP client
// (here for elicitation), CallTool calls any tool of the gateway's catalog.
// The Recorder answers both as a test would.
func ExampleCall() {
	ctx := context.Background()
	rec := &sdktest.Recorder{
		RequestFunc: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"action":"accept","content":{"city":"Lisbon"}}`), nil
		},
		CallToolFunc: func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
			text, _ := json.Marshal(name + " called with " + string(args))
			return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`), nil
		},
	}

	// What the body of an executor's Call might do with its sdk.Call.
	run := func(ctx context.Context, call sdk.Call) (json.RawMessage, error) {
		answer, err := call.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"Which city?"}`))
		if err != nil {
			return nil, fmt.Errorf("ask for a city: %w", err)
		}
		var a struct {
			Content struct {
				City string `json:"city"`
			} `json:"content"`
		}
		if err := json.Unmarshal(answer, &a); err != nil {
			return nil, err
		}
		args, _ := json.Marshal(map[string]string{"city": a.Content.City})
		return call.CallTool(ctx, "weather__forecast", args)
	}

	res, err := run(ctx, rec)
	fmt.Println(string(res), err)
	// Output:
	// {"content":[{"type":"text","text":"weather__forecast called with {\"city\":\"Lisbon\"}"}]} <nil>
}

// reloader is an executor whose sources change on their own. It embeds
// shout for the rest of the contract.
type reloader struct {
	*shout
	changes chan sdk.Change
}

// Watch sends every change to emit until ctx is done.
func (r reloader) Watch(ctx context.Context, emit func(sdk.Change)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-r.changes:
			emit(c)
		}
	}
}

// An executor whose definitions change outside any call (an upstream's
// list_changed, an edited file) implements Watcher. The gateway calls Watch
// once, after Info, and keeps it running for the plugin's lifetime.
func ExampleWatcher() {
	exec := reloader{shout: &shout{}, changes: make(chan sdk.Change, 1)}
	var _ sdk.Watcher = exec

	exec.changes <- sdk.Change{
		Source:      "loud",
		Definitions: &sdk.Definitions{Tools: []json.RawMessage{json.RawMessage(`{"name":"shout_louder","inputSchema":{"type":"object"}}`)}},
	}

	ctx, cancel := context.WithCancel(context.Background())
	err := exec.Watch(ctx, func(c sdk.Change) {
		fmt.Println(c.Source, string(c.Definitions.Tools[0]))
		cancel()
	})
	fmt.Println(err)
	// Output:
	// loud {"name":"shout_louder","inputSchema":{"type":"object"}}
	// <nil>
}

// worker is an executor that starts a background job per source, which it
// must stop before its process ends. It embeds shout for the rest of the
// contract.
type worker struct {
	*shout
	jobs []chan struct{} // closed to stop a job; each job then closes its ack
	acks []chan struct{}
}

// Shutdown stops every job, giving up when ctx is done: the gateway kills
// the process soon after.
func (w *worker) Shutdown(ctx context.Context) error {
	for _, stop := range w.jobs {
		close(stop)
	}
	for _, ack := range w.acks {
		select {
		case <-ack:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// An executor that started something that must not outlive it (child
// processes, connections, temporary files) implements Shutdowner. Serve
// calls Shutdown once before the process ends: when the gateway stops the
// plugin, on SIGTERM, or when the gateway is gone (stdin EOF). Its context
// ends shortly before the gateway's kill window does.
func ExampleShutdowner() {
	w := &worker{shout: &shout{}}
	for range 2 {
		stop, ack := make(chan struct{}), make(chan struct{})
		go func() {
			<-stop // the job's work would go here
			close(ack)
		}()
		w.jobs, w.acks = append(w.jobs, stop), append(w.acks, ack)
	}
	var _ sdk.Shutdowner = w

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(w.Shutdown(ctx))
	// Output:
	// <nil>
}

// A tools/call's params are read with ParseToolCall, and its arguments
// decoded strictly with DecodeArguments. Arguments the tool cannot use
// are answered with ErrorResult, a result the model reads; a tool the
// source does not have is an error of Call, UnknownTool.
func ExampleToolCall_DecodeArguments() {
	run := func(params string) (json.RawMessage, error) {
		tc, err := sdk.ParseToolCall(sdk.CallRequest{Method: "tools/call", Params: json.RawMessage(params)})
		if err != nil {
			return nil, err
		}
		if tc.Name != "countdown" {
			return nil, sdk.UnknownTool(tc.Name)
		}
		in := struct {
			From int `json:"from"`
		}{From: 3} // the default, kept when the client sends no arguments
		if err := tc.DecodeArguments(&in); err != nil {
			return sdk.ErrorResult(err.Error()), nil
		}
		return sdk.TextResult(fmt.Sprintf("counting down from %d", in.From)), nil
	}
	for _, params := range []string{
		`{"name":"countdown"}`,
		`{"name":"countdown","arguments":{"from":5}}`,
		`{"name":"countdown","arguments":{"from":"five"}}`,
		`{"name":"countdown","arguments":{"form":5}}`,
		`{"name":"count"}`,
	} {
		if res, err := run(params); err != nil {
			fmt.Println("error:", err)
		} else {
			fmt.Println(string(res))
		}
	}
	// Output:
	// {"content":[{"type":"text","text":"counting down from 3"}]}
	// {"content":[{"type":"text","text":"counting down from 5"}]}
	// {"content":[{"type":"text","text":"arguments of tool \"countdown\": \"from\" must be an integer, not string"}],"isError":true}
	// {"content":[{"type":"text","text":"arguments of tool \"countdown\": unknown field \"form\""}],"isError":true}
	// error: rpc error -32602: unknown tool "count"
}

// A tool that declares an outputSchema answers with structured content;
// StructuredResult adds the same JSON as text for clients that do not
// read it.
func ExampleStructuredResult() {
	res, err := sdk.StructuredResult(map[string]any{"greeting": "Hello, Ada!"})
	fmt.Println(string(res), err)
	// Output:
	// {"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}],"structuredContent":{"greeting":"Hello, Ada!"}} <nil>
}

// A resources/read of a text resource answers with its contents.
func ExampleResourceResult() {
	fmt.Println(string(sdk.ResourceResult("rows://team/file", "application/yaml", "- name: ada\n")))
	// Output:
	// {"contents":[{"uri":"rows://team/file","mimeType":"application/yaml","text":"- name: ada\n"}]}
}

// A prompts/get answers with the prompt's messages; PromptResult makes the
// common one, a single user message.
func ExamplePromptResult() {
	var args struct {
		Row string `json:"row"`
	}
	_ = json.Unmarshal(json.RawMessage(`{"row":"ada"}`), &args) // from the prompts/get params' "arguments"
	fmt.Println(string(sdk.PromptResult("Explain a row", "Explain the row "+args.Row+".")))
	// Output:
	// {"description":"Explain a row","messages":[{"role":"user","content":{"type":"text","text":"Explain the row ada."}}]}
}
