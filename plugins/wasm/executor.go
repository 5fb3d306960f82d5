package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/skillgate/skillgate/internal/keylock"

	"github.com/tetratelabs/wazero"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// version is the executor's version.
const version = "0.1.0"

// Kind is the spec kind this executor loads.
const Kind = "wasm"

// Executor is the built-in "wasm" executor: each source is one tool folder
// whose entry is a WebAssembly module, run by wazero inside the executor's
// process. It implements sdk.Executor.
type Executor struct {
	log          *slog.Logger
	cacheDir     string
	maxInstances int
	environ      func(string) (string, bool)

	mu      sync.Mutex
	tools   map[string]*tool
	loading keylock.Locks // serializes Load/Unload per source
	cache   wazero.CompilationCache
	closed  bool
}

var _ sdk.Executor = (*Executor)(nil)

// Option configures an Executor.
type Option func(*Executor)

// WithLogger sets the logger for the executor's own messages. The default
// writes text to the process's stderr, which go-plugin hands to the gateway.
func WithLogger(l *slog.Logger) Option {
	return func(e *Executor) { e.log = l }
}

// WithCacheDir sets the folder of the compilation cache: compiled machine
// code of every module, keyed by the module's hash, the wazero version and
// the CPU, so a restarted executor skips compiling. The default is
// skillgate/wasm in the user's cache folder (os.UserCacheDir); an empty dir
// keeps compiled code in memory only.
func WithCacheDir(dir string) Option {
	return func(e *Executor) { e.cacheDir = dir }
}

// WithMaxInstances caps the warm instances of each reactor tool, which is
// how many calls of one reactor run at once; more calls wait for a free
// instance. The default is GOMAXPROCS, at least 2.
func WithMaxInstances(n int) Option {
	return func(e *Executor) {
		if n > 0 {
			e.maxInstances = n
		}
	}
}

// WithEnviron sets where the variables that tool.yaml's env and secrets
// name are looked up; the default is os.LookupEnv. Tests use it to grant
// variables without touching the process environment.
func WithEnviron(lookup func(string) (string, bool)) Option {
	return func(e *Executor) { e.environ = lookup }
}

// New returns an executor with no tools. It starts nothing and creates no
// folder; the cache is opened on the first Load.
func New(opts ...Option) *Executor {
	e := &Executor{
		tools:        map[string]*tool{},
		maxInstances: max(2, runtime.GOMAXPROCS(0)),
		environ:      os.LookupEnv,
		cacheDir:     defaultCacheDir(),
	}
	for _, o := range opts {
		o(e)
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return e
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "skillgate", "wasm")
}

// Info implements sdk.Executor.
func (e *Executor) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "wasm", Version: version, Kinds: []string{Kind}}, nil
}

// compilationCache opens the cache on first use. A cache folder that cannot
// be created falls back to memory, with a warning: tools still run, they
// only compile again after a restart.
func (e *Executor) compilationCache() wazero.CompilationCache {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cache != nil || e.closed {
		return e.cache
	}
	if e.cacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(e.cacheDir)
		if err == nil {
			e.cache = c
			return c
		}
		e.log.Warn("wasm compilation cache folder unusable; compiling into memory only", "dir", e.cacheDir, "err", err)
	}
	e.cache = wazero.NewCompilationCache()
	return e.cache
}

// Load implements sdk.Executor. It reads the module from the tool folder,
// compiles it (or takes it from the cache), and checks that it fits its
// style: a command module is instantiated once without running, a
// reactor's first instance is started and initialized. Loading a loaded
// source replaces it; its calls in flight finish on the old module.
func (e *Executor) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind != Kind {
		return sdk.Definitions{}, fmt.Errorf("%w: kind %q (the wasm executor loads %q)", sdk.ErrUnsupported, req.Kind, Kind)
	}
	if req.Source == "" {
		return sdk.Definitions{}, fmt.Errorf("%w: the source has no name", sdk.ErrInvalidSpec)
	}
	cfg, err := parseSpec(req.Spec, e.environ)
	if err != nil {
		return sdk.Definitions{}, fmt.Errorf("source %q: %w", req.Source, err)
	}
	unlock := e.loading.Lock(req.Source)
	defer unlock()
	if e.isClosed() {
		return sdk.Definitions{}, fmt.Errorf("%w: the executor is shut down", sdk.ErrUnavailable)
	}
	t, err := newTool(ctx, req.Source, cfg, e.compilationCache(), e.maxInstances, e.log)
	if err != nil {
		return sdk.Definitions{}, fmt.Errorf("load source %q (%s): %w", req.Source, filepath.Join(cfg.dir, cfg.entry), err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		t.close(ctx)
		return sdk.Definitions{}, fmt.Errorf("%w: the executor is shut down", sdk.ErrUnavailable)
	}
	old := e.tools[req.Source]
	e.tools[req.Source] = t
	e.mu.Unlock()
	if old != nil {
		go old.retire(context.WithoutCancel(ctx), old.cfg.timeout)
	}
	return sdk.Definitions{
		Tools:  []json.RawMessage{cfg.definition},
		Status: &sdk.Status{State: sdk.StateReady},
	}, nil
}

func (e *Executor) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Unload implements sdk.Executor. Calls in flight may finish within their
// timeout; then the tool's instances are closed.
func (e *Executor) Unload(ctx context.Context, source string) error {
	unlock := e.loading.Lock(source)
	defer unlock()
	e.mu.Lock()
	t := e.tools[source]
	delete(e.tools, source)
	e.mu.Unlock()
	if t == nil {
		return fmt.Errorf("%w: %q", sdk.ErrUnknownSource, source)
	}
	t.retire(ctx, t.cfg.timeout)
	return nil
}

// Call implements sdk.Executor for tools/call. The arguments go to the
// module as JSON on stdin; what it writes to stdout is the result, and
// its stderr lines become progress and log notifications. A module that
// fails, traps, runs out of memory or time yields a result with isError
// and a status in _meta (see MetaStatus), not an error.
func (e *Executor) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	e.mu.Lock()
	t := e.tools[req.Source]
	e.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("%w: %q", sdk.ErrUnknownSource, req.Source)
	}
	if req.Method != "tools/call" {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: fmt.Sprintf("wasm tool %q serves tools/call only, not %s", t.cfg.name, req.Method)}
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "tools/call params: " + err.Error()}
	}
	if p.Name != t.cfg.name {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q (source %q has %q)", p.Name, req.Source, t.cfg.name)}
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if args[0] != '{' {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("tool %s: arguments must be a JSON object", t.cfg.name)}
	}
	// Before the module runs: what it makes of a missing argument tells
	// the caller nothing.
	if err := t.cfg.args.Check(args); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	if !t.acquire() {
		return nil, fmt.Errorf("%w: tool %q is being reloaded or unloaded", sdk.ErrUnavailable, t.cfg.name)
	}
	defer t.release()
	return t.call(ctx, args, call)
}

// Close unloads every tool, stopping calls in flight, and closes the
// compilation cache. It is idempotent. Out of process, call it after
// sdk.Serve returns.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	all := e.tools
	e.tools = map[string]*tool{}
	cache := e.cache
	e.cache = nil
	e.mu.Unlock()
	ctx := context.Background()
	for _, t := range all {
		t.retire(ctx, 0)
	}
	if cache != nil {
		return cache.Close(ctx)
	}
	return nil
}
