package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// Kind is the spec kind this executor loads.
const Kind = "script"

const version = "0.1.0"

// Defaults, each overridden by a Spec's Limits or a tool's own setting.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultStallTimeout = 20 * time.Second
	DefaultOutputCap    = 1 << 20
	// DefaultMaxProcesses caps the script processes running at once,
	// across all tools.
	DefaultMaxProcesses = 8
	// stopGrace is how long a process gets between SIGTERM and SIGKILL.
	stopGrace = 2 * time.Second
)

// Executor is the built-in "script" executor. It implements sdk.Executor,
// in process or served out of process with sdk.Serve. It is safe for
// concurrent use.
type Executor struct {
	log          *slog.Logger
	root         string
	interpreters map[string][]string
	procs        chan struct{} // executor-wide process slots

	mu     sync.Mutex
	tools  map[string]*tool
	closed bool
}

var _ sdk.Executor = (*Executor)(nil)

// Option configures an Executor.
type Option func(*Executor)

// WithLogger sets the logger for the executor's messages.
func WithLogger(l *slog.Logger) Option { return func(e *Executor) { e.log = l } }

// WithMaxProcesses caps the script processes running at once across all
// tools (default DefaultMaxProcesses): per-call processes and dependency
// installs. A persistent tool's process (one per tool) is not counted, nor
// are the calls it serves.
func WithMaxProcesses(n int) Option {
	return func(e *Executor) {
		if n > 0 {
			e.procs = make(chan struct{}, n)
		}
	}
}

// WithRoot sets the directory under which tools without a Spec.StateDir or
// Spec.CacheDir get theirs (default: the user cache dir's skillgate/script).
func WithRoot(dir string) Option { return func(e *Executor) { e.root = dir } }

// WithInterpreters replaces the interpreter allowlist: runtime -> argv
// that runs an entry (e.g. "python": {"/usr/bin/python3"}); "exec" with an
// empty argv allows running executable entries. A Spec's
// Limits.Interpreters takes precedence.
func WithInterpreters(m map[string][]string) Option {
	return func(e *Executor) { e.interpreters = m }
}

// DefaultInterpreters is the default allowlist.
func DefaultInterpreters() map[string][]string {
	return map[string][]string{
		toolspec.RuntimePython: {"python3"},
		toolspec.RuntimeNode:   {"node"},
		toolspec.RuntimeBash:   {"bash"},
		toolspec.RuntimeRuby:   {"ruby"},
		toolspec.RuntimeExec:   {},
	}
}

// New returns an executor with no tools. It starts nothing.
func New(opts ...Option) *Executor {
	e := &Executor{tools: map[string]*tool{}, interpreters: DefaultInterpreters()}
	for _, o := range opts {
		o(e)
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if e.procs == nil {
		e.procs = make(chan struct{}, DefaultMaxProcesses)
	}
	if e.root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		e.root = filepath.Join(dir, "skillgate", "script")
	}
	return e
}

// Info implements sdk.Executor.
func (e *Executor) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "script", Version: version, Kinds: []string{Kind}}, nil
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_.-]`) })

// Load implements sdk.Executor: it validates the spec, checks the entry
// and the interpreter, and returns the tool's definition. Dependencies are
// installed by the first call, which reports progress. Loading a loaded
// source replaces it; calls in flight finish on the old one.
func (e *Executor) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind != Kind {
		return sdk.Definitions{}, fmt.Errorf("%w: kind %q (the script executor loads %q)", sdk.ErrUnsupported, req.Kind, Kind)
	}
	if req.Source == "" {
		return sdk.Definitions{}, fmt.Errorf("%w: the source has no name", sdk.ErrInvalidSpec)
	}
	spec, err := toolspec.ParseSpec(req.Spec)
	if err != nil {
		return sdk.Definitions{}, fmt.Errorf("%w: tool %q: %v", sdk.ErrInvalidSpec, req.Source, err)
	}
	if spec.Tool.Runtime == toolspec.RuntimeWasm {
		return sdk.Definitions{}, fmt.Errorf("%w: tool %q: runtime wasm is run by the wasm executor (kind \"wasm\")", sdk.ErrInvalidSpec, req.Source)
	}
	safe := unsafeChars().ReplaceAllString(req.Source, "_")
	if spec.StateDir == "" {
		spec.StateDir = filepath.Join(e.root, "state", safe)
	}
	if spec.CacheDir == "" {
		spec.CacheDir = filepath.Join(e.root, "cache", safe)
	}
	t, err := newTool(e, req.Source, spec)
	if err != nil {
		return sdk.Definitions{}, fmt.Errorf("%w: tool %q: %v", sdk.ErrInvalidSpec, req.Source, err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return sdk.Definitions{}, fmt.Errorf("%w: the executor is shut down", sdk.ErrUnavailable)
	}
	old := e.tools[req.Source]
	e.tools[req.Source] = t
	e.mu.Unlock()
	if old != nil {
		go old.close()
	}
	return sdk.Definitions{
		Tools:  []json.RawMessage{spec.Tool.Definition()},
		Status: &sdk.Status{State: sdk.StateReady},
	}, nil
}

// Unload implements sdk.Executor: a persistent process is stopped; per-call
// processes in flight finish.
func (e *Executor) Unload(_ context.Context, source string) error {
	e.mu.Lock()
	t := e.tools[source]
	delete(e.tools, source)
	e.mu.Unlock()
	if t == nil {
		return fmt.Errorf("%w: %q", sdk.ErrUnknownSource, source)
	}
	t.close()
	return nil
}

// Call implements sdk.Executor for tools/call. A tool that fails (exits
// non-zero, times out, stalls, prints garbage) yields a CallToolResult with
// isError set and its status in _meta["skillgate/status"], not an error.
func (e *Executor) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	e.mu.Lock()
	t := e.tools[req.Source]
	e.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("%w: %q", sdk.ErrUnknownSource, req.Source)
	}
	if req.Method != "tools/call" {
		return nil, fmt.Errorf("%w: %s (a script tool answers tools/call only)", sdk.ErrUnsupported, req.Method)
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			Env   map[string]string `json:"skillgate.dev/env"`
			Shape bool              `json:"skillgate.dev/shape"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "params: " + err.Error()}
	}
	if len(p.Meta.Env) > 0 {
		t.wiring.Store(&p.Meta.Env)
	}
	if p.Name != t.spec.Tool.Name {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q (this source has %q)", p.Name, t.spec.Tool.Name)}
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	// Unmarshal has checked that params, arguments included, are valid
	// JSON, and a RawMessage starts at its value's first byte.
	if args[0] != '{' {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "arguments must be a JSON object"}
	}
	// Before the script runs: what it makes of a missing argument (a
	// Python KeyError prints just 'name') tells the caller nothing.
	if err := t.names.check(args); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	if err := t.args.Check(args); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	if req.Client != "" {
		ctx = context.WithValue(ctx, clientKey{}, req.Client)
	}
	if p.Meta.Shape {
		ctx = context.WithValue(ctx, shapeKey{}, true)
	}
	return t.call(ctx, args, call)
}

// clientKey is the context key under which a call carries its
// sdk.CallRequest.Client down to the conn that runs it.
type clientKey struct{}

// shapeKey marks the context of a call that asked for shaping (MetaShape).
type shapeKey struct{}

// shaping reports whether ctx's call asked for shaping.
func shaping(ctx context.Context) bool { v, _ := ctx.Value(shapeKey{}).(bool); return v }

// MetaEnv is the _meta member of a tools/call in which the gateway passes
// the variables of the services a tool requires (NAME_HOST, NAME_PORT, ...).
// The gateway drops it from what clients send, so only the gateway sets
// it. A persistent process started with other values is replaced (see
// callPersistent).
const MetaEnv = "skillgate.dev/env"

// Close stops every tool's processes and refuses new loads. It is
// idempotent.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	all := e.tools
	e.tools = map[string]*tool{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.close()
		}()
	}
	wg.Wait()
	return nil
}

// acquire takes an executor-wide process slot.
func (e *Executor) acquire(ctx context.Context) (func(), error) {
	select {
	case e.procs <- struct{}{}:
		return func() { <-e.procs }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errClosed = errors.New("the tool was unloaded")

// MetaShape is the _meta member of a tools/call (true) by which the
// gateway says it shapes the result to a budget itself, as the skills
// library does: a simple-protocol tool's stdout is then kept up to
// MaxShapedOutput (or the output cap, if larger) instead of the output
// cap, so that shaping sees whole JSON and the artifact holds the whole
// output. Like MetaEnv, the gateway drops it from what clients send.
const MetaShape = "skillgate.dev/shape"

// MaxShapedOutput (16 MiB) is how much stdout a call asking for shaping
// keeps, in memory; past it the output is cut and flagged (TruncatedKey)
// with this bound as the cap. Its result, text and structuredContent,
// stays well inside the plugin boundary's 64 MiB message.
const MaxShapedOutput = 16 << 20
