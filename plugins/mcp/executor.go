package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/keylock"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// version is the executor's version, also sent to upstreams as clientInfo.
const version = "0.1.0"

// Kind is the spec kind this executor loads.
const Kind = "mcp"

// maxPendingChanges bounds the changes waiting for one slow watcher.
const maxPendingChanges = 4096

// Executor is the built-in "mcp" executor: each source is one MCP server,
// a supervised child process (stdio) or a remote connection (streamable
// HTTP, SSE), shared by every call routed to it. It implements sdk.Executor
// and sdk.Watcher, in process or served out of process with sdk.Serve.
type Executor struct {
	log *slog.Logger

	mu       sync.Mutex
	sources  map[string]*source
	loading  keylock.Locks // serializes Load/Unload per source
	watchers map[*watcher]struct{}
	closed   bool
	dropped  limiter // logs of changes a watcher had no room for
	clock    clock   // the listen streams' backoff (realClock but in tests)

	// stopBy is when every upstream must be down once Shutdown was called,
	// in Unix nanoseconds; 0 means after each one's whole grace.
	stopBy atomic.Int64
}

// stopMargin is how long before a stop's deadline a stdio upstream is
// killed at the latest, so that the one who set the deadline hears back
// before it.
const stopMargin = 100 * time.Millisecond

var (
	_ sdk.Executor   = (*Executor)(nil)
	_ sdk.Watcher    = (*Executor)(nil)
	_ sdk.Shutdowner = (*Executor)(nil)
	_ io.Closer      = (*Executor)(nil)
)

// Option configures an Executor.
type Option func(*Executor)

// WithLogger sets the logger for the executor's own messages and the
// upstreams' stderr lines (each with a "source" attribute). The default
// writes text to the process's stderr, which go-plugin hands to the gateway.
func WithLogger(l *slog.Logger) Option {
	return func(e *Executor) { e.log = l }
}

// withClock replaces the executor's clock (tests only).
func withClock(c clock) Option {
	return func(e *Executor) { e.clock = c }
}

// New returns an executor with no sources. It starts nothing.
func New(opts ...Option) *Executor {
	e := &Executor{
		sources:  map[string]*source{},
		watchers: map[*watcher]struct{}{},
		dropped:  limiter{per: 20},
		clock:    realClock{},
	}
	for _, o := range opts {
		o(e)
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return e
}

// Info implements sdk.Executor.
func (e *Executor) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "mcp", Version: version, Kinds: []string{Kind}}, nil
}

// Load implements sdk.Executor. An eager source (the default) is started
// and listed, and stays up; a failure to start is returned and nothing
// stays behind. A lazy source is started, listed and stopped again; its
// first Call starts it for good. Loading a loaded source with the same spec
// re-lists it; with another spec, the old upstream is stopped first.
func (e *Executor) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind != Kind {
		return sdk.Definitions{}, fmt.Errorf("%w: kind %q (the mcp executor loads %q)", sdk.ErrUnsupported, req.Kind, Kind)
	}
	if req.Source == "" {
		return sdk.Definitions{}, fmt.Errorf("%w: the source has no name", sdk.ErrInvalidSpec)
	}
	spec, err := ParseSpec(req.Spec)
	if err != nil {
		return sdk.Definitions{}, fmt.Errorf("source %q: %w", req.Source, err)
	}
	unlock := e.loading.Lock(req.Source)
	defer unlock()

	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return sdk.Definitions{}, fmt.Errorf("%w: the executor is shut down", sdk.ErrUnavailable)
	}
	old := e.sources[req.Source]
	e.mu.Unlock()

	if old != nil && old.spec.sameAs(spec) {
		if defs, ok := old.reload(ctx); ok {
			return defs, nil
		}
	}
	if old != nil {
		e.remove(old)
		old.stop(time.Time{}, whyRespec)
	}

	s := newSource(e, req.Source, spec)
	var defs sdk.Definitions
	if spec.Start == StartLazy {
		defs, err = s.probe(ctx)
	} else {
		defs, err = s.startEager(ctx)
	}
	if err != nil {
		return sdk.Definitions{}, fmt.Errorf("load source %q: %w", req.Source, spec.redactErr(err))
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		s.stop(time.Time{}, whyShutdown)
		return sdk.Definitions{}, fmt.Errorf("%w: the executor is shut down", sdk.ErrUnavailable)
	}
	e.sources[req.Source] = s
	e.mu.Unlock()
	st := s.status()
	defs.Status = &st
	return defs, nil
}

// Unload implements sdk.Executor: the upstream is shut down gracefully and
// in-flight calls on it fail. A stdio upstream is down before ctx's
// deadline: a shutdown_grace that would end later is shortened.
func (e *Executor) Unload(ctx context.Context, name string) error {
	unlock := e.loading.Lock(name)
	defer unlock()
	e.mu.Lock()
	s := e.sources[name]
	e.mu.Unlock()
	if s == nil {
		return fmt.Errorf("%w: %q", sdk.ErrUnknownSource, name)
	}
	e.remove(s)
	dl, _ := ctx.Deadline()
	s.stop(dl, whyUnloaded)
	return nil
}

func (e *Executor) remove(s *source) {
	e.mu.Lock()
	if e.sources[s.name] == s {
		delete(e.sources, s.name)
	}
	e.mu.Unlock()
}

// Call implements sdk.Executor. req.Params are forwarded as they are (with a
// progress token of the executor's own added) and the result comes back as
// the upstream sent it; a JSON-RPC error of the upstream is returned as that
// *sdk.RPCError. Progress and log notifications reach call; server requests
// (sampling, elicitation, roots) are answered through call.Request.
func (e *Executor) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	e.mu.Lock()
	s := e.sources[req.Source]
	e.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("%w: %q", sdk.ErrUnknownSource, req.Source)
	}
	return s.call(ctx, req, call)
}

// Close stops every upstream (gracefully, in parallel, each given its whole
// shutdown_grace) and refuses new loads. It is idempotent.
func (e *Executor) Close() error {
	return e.Shutdown(context.Background())
}

// Shutdown implements sdk.Shutdowner: it is Close with a deadline, ctx's.
// Each stdio upstream still gets its stdin closed, SIGTERM and SIGKILL, in
// that order, but within the time left: a shutdown_grace that would end
// after ctx's deadline is shortened to end before it. Served out of
// process, the deadline is the gateway's kill window (see sdk.Serve), so
// the upstreams are stopped in order rather than killed with the
// executor. Shutdown returns once every upstream is down, or with
// ctx.Err() when ctx is done first.
func (e *Executor) Shutdown(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok {
		e.stopBy.Store(dl.UnixNano())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.stopAll()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopAll stops every upstream and refuses new loads.
func (e *Executor) stopAll() {
	e.mu.Lock()
	e.closed = true
	all := make([]*source, 0, len(e.sources))
	for _, s := range e.sources {
		all = append(all, s)
	}
	e.sources = map[string]*source{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop(time.Time{}, whyShutdown)
		}()
	}
	wg.Wait()
}

// Status returns the health of every loaded source, by name.
func (e *Executor) Status() map[string]sdk.Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]sdk.Status, len(e.sources))
	for name, s := range e.sources {
		out[name] = s.status()
	}
	return out
}

// Watch implements sdk.Watcher. It first reports the status of every loaded
// source, then every change: status (starting, ready, failed, restarting,
// stopped), a new set of definitions after an upstream's list_changed or a
// restart, and notifications/resources/updated. Changes for one watcher are
// delivered in order; a watcher that falls more than 4096 changes behind
// loses the excess. Any number of watchers may run.
func (e *Executor) Watch(ctx context.Context, emit func(sdk.Change)) error {
	w := &watcher{kick: make(chan struct{}, 1)}
	e.mu.Lock()
	names := make([]string, 0, len(e.sources))
	for name := range e.sources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := e.sources[name].status()
		w.push(sdk.Change{Source: name, Status: &st})
	}
	e.watchers[w] = struct{}{}
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.watchers, w)
		e.mu.Unlock()
	}()
	for {
		for _, ch := range w.take() {
			emit(ch)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.kick:
		}
	}
}

// broadcast hands a change to every watcher without blocking.
func (e *Executor) broadcast(ch sdk.Change) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for w := range e.watchers {
		if !w.push(ch) {
			// An upstream that floods log messages outside any call
			// must not flood the gateway's log as well.
			logLimited(e.log, &e.dropped, slog.LevelWarn, "a watcher fell behind; dropped a change", "source", ch.Source)
		}
	}
}

// watcher is the queue of changes for one Watch call.
type watcher struct {
	mu   sync.Mutex
	q    []sdk.Change
	kick chan struct{}
}

func (w *watcher) push(ch sdk.Change) bool {
	w.mu.Lock()
	if len(w.q) >= maxPendingChanges {
		w.mu.Unlock()
		return false
	}
	w.q = append(w.q, ch)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return true
}

func (w *watcher) take() []sdk.Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.q
	w.q = nil
	return q
}
