package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// kind is the only spec kind this executor loads.
const kind = "hello"

// version is the executor's own version, reported by Info. Release builds
// set it with -ldflags "-X main.version=1.2.3".
var version = "0.1.0"

// toolDefs are the MCP Tool objects the executor offers, keyed by name.
// They are written as JSON and sent as they are: the gateway passes every
// field through, including ones its own MCP library does not know yet.
var toolDefs = map[string]json.RawMessage{
	"greet": json.RawMessage(`{
		"name": "greet",
		"title": "Greet someone",
		"description": "Answers with a greeting for name.",
		"inputSchema": {
			"type": "object",
			"properties": {"name": {"type": "string", "minLength": 1, "description": "Who to greet."}},
			"required": ["name"],
			"additionalProperties": false
		},
		"outputSchema": {
			"type": "object",
			"properties": {"greeting": {"type": "string"}},
			"required": ["greeting"]
		},
		"annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
	}`),
	"countdown": json.RawMessage(`{
		"name": "countdown",
		"title": "Count down",
		"description": "Counts down from 'from' to 1, one step per interval, reporting each step as progress.",
		"inputSchema": {
			"type": "object",
			"properties": {"from": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3}},
			"additionalProperties": false
		},
		"outputSchema": {
			"type": "object",
			"properties": {"counted": {"type": "integer"}},
			"required": ["counted"]
		},
		"annotations": {"readOnlyHint": true, "openWorldHint": false}
	}`),
}

// spec is the JSON a hello source is configured with (LoadRequest.Spec).
type spec struct {
	// Greeting starts every greeting; the default is "Hello".
	Greeting string `json:"greeting"`
	// Tools are the tools the source offers; the default is all of them.
	Tools []string `json:"tools"`
	// Interval is the pause after each countdown step, e.g. "250ms";
	// the default is "1s".
	Interval string `json:"interval"`
}

// source is a loaded, validated spec.
type source struct {
	greeting string
	interval time.Duration
	tools    []string
}

// hello is the executor. Its zero value is ready to use. The gateway runs
// Load, Unload and Call concurrently, so sources sit behind a lock; calls
// only hold it long enough to find their source.
type hello struct {
	mu      sync.RWMutex
	sources map[string]*source
}

var _ sdk.Executor = (*hello)(nil)

// Info implements sdk.Executor.
func (*hello) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "hello", Version: version, Kinds: []string{kind}}, nil
}

// Load implements sdk.Executor. Loading a source again replaces it.
func (h *hello) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind != kind {
		return sdk.Definitions{}, fmt.Errorf("%w: kind %q; this executor loads %q", sdk.ErrUnsupported, req.Kind, kind)
	}
	src, err := parseSpec(req.Spec)
	if err != nil {
		return sdk.Definitions{}, err
	}
	h.mu.Lock()
	if h.sources == nil {
		h.sources = make(map[string]*source)
	}
	h.sources[req.Source] = src
	h.mu.Unlock()

	var defs sdk.Definitions
	for _, name := range src.tools {
		defs.Tools = append(defs.Tools, toolDefs[name])
	}
	return defs, nil
}

// parseSpec decodes and checks a spec strictly: an unknown field is more
// likely a typo than something to ignore.
func parseSpec(raw json.RawMessage) (*source, error) {
	var s spec
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%w: %v", sdk.ErrInvalidSpec, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("%w: unexpected data after the spec object", sdk.ErrInvalidSpec)
		}
	}
	src := &source{greeting: strings.TrimSpace(s.Greeting), interval: time.Second, tools: s.Tools}
	if src.greeting == "" {
		src.greeting = "Hello"
	}
	if s.Interval != "" {
		d, err := time.ParseDuration(s.Interval)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%w: interval %q is not a duration such as \"500ms\" or \"2s\"", sdk.ErrInvalidSpec, s.Interval)
		}
		src.interval = d
	}
	if s.Tools == nil {
		src.tools = []string{"greet", "countdown"}
	}
	if len(src.tools) == 0 {
		return nil, fmt.Errorf("%w: tools is empty; list some of \"greet\" and \"countdown\", or leave it out for both", sdk.ErrInvalidSpec)
	}
	for i, name := range src.tools {
		if _, ok := toolDefs[name]; !ok {
			return nil, fmt.Errorf("%w: unknown tool %q; this executor offers \"greet\" and \"countdown\"", sdk.ErrInvalidSpec, name)
		}
		if slices.Contains(src.tools[:i], name) {
			return nil, fmt.Errorf("%w: tool %q is listed twice", sdk.ErrInvalidSpec, name)
		}
	}
	return src, nil
}

// Unload implements sdk.Executor.
func (h *hello) Unload(_ context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sources[name]; !ok {
		return fmt.Errorf("%w: %q", sdk.ErrUnknownSource, name)
	}
	delete(h.sources, name)
	return nil
}

// Call implements sdk.Executor. Only tools/call is offered: a hello source
// has no resources or prompts.
func (h *hello) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	h.mu.RLock()
	src, ok := h.sources[req.Source]
	h.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", sdk.ErrUnknownSource, req.Source)
	}
	if req.Method != "tools/call" {
		return nil, fmt.Errorf("%w: method %s", sdk.ErrUnsupported, req.Method)
	}
	// Malformed params are an *sdk.RPCError (JSON-RPC -32602) already.
	tc, err := sdk.ParseToolCall(req)
	if err != nil {
		return nil, err
	}
	// An unknown tool is a protocol error (JSON-RPC -32602) in MCP; bad
	// arguments are a tool error (isError) the model can correct.
	if !slices.Contains(src.tools, tc.Name) {
		return nil, sdk.UnknownTool(tc.Name)
	}
	switch tc.Name {
	case "greet":
		return greet(src, tc, call)
	default:
		return countdown(ctx, src, tc, call)
	}
}

func greet(src *source, tc sdk.ToolCall, call sdk.Call) (json.RawMessage, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := tc.DecodeArguments(&in); err != nil {
		return sdk.ErrorResult(err.Error() + `; greet takes {"name": "Ada"}`), nil
	}
	if strings.TrimSpace(in.Name) == "" {
		return sdk.ErrorResult(`greet needs a non-empty string argument "name", e.g. {"name": "Ada"}`), nil
	}
	greeting := fmt.Sprintf("%s, %s!", src.greeting, strings.TrimSpace(in.Name))
	if err := call.Progress(sdk.Progress{Progress: 1, Total: 1, Message: "greeting composed"}); err != nil {
		return nil, fmt.Errorf("report progress: %w", err)
	}
	// Structured content, and the same JSON as text for older clients, as
	// MCP asks of a tool with an outputSchema.
	return sdk.StructuredResult(map[string]any{"greeting": greeting})
}

// countdown reports the steps from..1 as progress. MCP requires progress
// values to increase, so the value counts steps done and the message
// carries the number being called out.
func countdown(ctx context.Context, src *source, tc sdk.ToolCall, call sdk.Call) (json.RawMessage, error) {
	in := struct {
		From int `json:"from"`
	}{From: 3}
	if err := tc.DecodeArguments(&in); err != nil {
		return sdk.ErrorResult(err.Error() + `; countdown takes {"from": 5}, or no arguments to count from 3`), nil
	}
	if in.From < 1 || in.From > 100 {
		return sdk.ErrorResult(`countdown counts from an integer "from" between 1 and 100, e.g. {"from": 5}`), nil
	}
	for n := in.From; n >= 1; n-- {
		p := sdk.Progress{Progress: float64(in.From - n + 1), Total: float64(in.From), Message: strconv.Itoa(n)}
		if err := call.Progress(p); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("report progress: %w", err)
		}
		if err := sleep(ctx, src.interval); err != nil {
			return nil, err
		}
	}
	return sdk.StructuredResult(map[string]any{"counted": in.From})
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
