package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Defaults for Options. DefaultKillWindow leaves a plugin time for an
// ordered shutdown of what it runs: it exceeds the mcp executor's default
// shutdown grace of a stdio server (5 s) by more than the reserve the SDK
// keeps for exiting (see Options.KillWindow).
const (
	DefaultKillWindow   = 10 * time.Second
	DefaultMinBackoff   = 200 * time.Millisecond
	DefaultMaxBackoff   = 30 * time.Second
	DefaultStartTimeout = 10 * time.Second
)

// exitGrace is how long a call that failed with sdk.ErrPluginShutdown waits
// to learn whether (and why) the process exited before it has the process
// health-checked; the call then waits for the check's verdict (see
// callError).
const exitGrace = 200 * time.Millisecond

// exitWait is how long a process whose health check failed has to be seen
// exiting before it is taken for hung ("stopped answering"). A dead process
// fails the check at once, often before its exit is seen: the reaping goes
// through a scan of /proc, which on a loaded machine takes a while.
const exitWait = 5 * time.Second

// Options configures how plugins are launched and supervised. The zero
// value is usable.
type Options struct {
	// Logger receives the supervisor's records and every line a plugin
	// writes to stdout or stderr, each with an "executor" attribute naming
	// the plugin. Default slog.Default().
	Logger *slog.Logger
	// Host serves the plugins' executor-wide callbacks (Log). It may be nil.
	Host sdk.Host
	// KillWindow is how long a plugin may take to exit after it was asked to
	// shut down, before it and what it started are SIGKILLed. Default 10s.
	//
	// The window is the one budget of a plugin's shutdown: the plugin is
	// told it (sdk.EnvKillWindow), and sdk.Serve gives the executor's
	// sdk.Shutdowner the window less a reserve for exiting (a quarter, at
	// most a second). An executor fits its own shutdown in that deadline
	// rather than be killed halfway: the mcp executor shortens a stdio
	// server's shutdown_grace that would end after it. So that the servers
	// get their whole grace, the window should exceed the longest grace of
	// the servers a plugin runs by more than that reserve.
	KillWindow time.Duration
	// MinBackoff and MaxBackoff bound the delay before a restart. The delay
	// starts at MinBackoff and doubles after each failed or short-lived run up
	// to MaxBackoff (each delay is drawn from its upper half, so it never
	// shrinks while failures repeat); it starts over once a run lasted
	// MaxBackoff. Defaults 200ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// StartTimeout bounds one launch: process start, go-plugin handshake and
	// Info. Default 10s.
	StartTimeout time.Duration
	// MaxProtocol caps the executor protocol versions offered in the
	// handshake (sdk.MinProtocolVersion to sdk.ProtocolVersion); 0 offers
	// every version. 2 keeps calls on the gRPC Calls stream, for example,
	// to compare with the side channel of 3 or to rule it out.
	MaxProtocol int
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.KillWindow <= 0 {
		o.KillWindow = DefaultKillWindow
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	return o
}

// State is where a plugin is in its life.
type State string

// States of a plugin.
const (
	// StateStarting: a launch is in progress, the first or a restart.
	StateStarting State = "starting"
	// StateRunning: the plugin serves calls.
	StateRunning State = "running"
	// StateRestarting: the plugin went down; it is launched again at
	// Status.NextRestart.
	StateRestarting State = "restarting"
	// StateFailed: the last launch attempt failed; the next one is at
	// Status.NextRestart. A zero NextRestart means the host gave up on the
	// plugin's file (LastError says why, ErrGaveUp): it is launched again
	// once the file changes.
	StateFailed State = "failed"
	// StateStopped: the plugin was closed.
	StateStopped State = "stopped"
)

// Status is a snapshot of a plugin's health.
type Status struct {
	State State
	// PID is the plugin process's id while it runs, else 0.
	PID int
	// Protocol is the executor protocol version negotiated with the running
	// process (sdk.MinProtocolVersion to sdk.ProtocolVersion), else 0.
	Protocol int
	// Calls is what calls ride on while the process runs: "socket" (the
	// executor's side channel, protocol 3) or "stream" (gRPC); else "".
	Calls string
	// Restarts counts launch attempts after the first start, failed ones
	// included.
	Restarts int
	// LastError says why the plugin last went down or failed to launch. It
	// stays set after a successful restart.
	LastError string
	// Since is when State was entered.
	Since time.Time
	// NextRestart is when the next launch is due, in the restarting and
	// failed states; zero when the host gave up on the plugin's file.
	NextRestart time.Time
}

// Plugin is a supervised executor plugin process. It implements sdk.Executor
// and sdk.Watcher on top of whichever process currently runs, so the gateway
// keeps one Plugin for the executor's whole life:
//
//   - Every successful Load is remembered (source -> request) until Unload.
//     When the process dies it is relaunched after a backoff, every
//     remembered source is loaded again, and each one's new Definitions are
//     emitted to the watchers as an sdk.Change (with an sdk.Status "ready",
//     or "failed" with the reason when the re-load failed). When it goes
//     down each source gets a Change with sdk.Status "starting" and the
//     reason.
//   - In-flight calls fail as soon as the process is gone, with an error
//     wrapping sdk.ErrPluginShutdown that names the executor and why it went
//     down ("executor \"mcp\" exited: exit status 2 (panic: ...)").
//   - While the plugin is down, Call fails at once with an error wrapping
//     sdk.ErrPluginShutdown; it does not wait for the restart. Load fails
//     the same way; Unload succeeds (the source is forgotten and will not be
//     re-loaded). Load and Unload that arrive while a restarted process is
//     re-loading sources wait for the re-load to finish.
//   - Watch survives restarts: watchers see the changes of every process
//     in turn, plus the supervisor's own.
//
// All methods are safe for concurrent use. Calls, Loads and Unloads run
// concurrently; Close may be called at any time and more than once.
type Plugin struct {
	spec  Spec
	opts  Options
	log   *slog.Logger
	tries *tries // how launches of its file went

	cur    atomic.Pointer[instance] // nil while down or closed
	closed atomic.Bool
	cancel context.CancelFunc // ends supervision
	done   chan struct{}      // closed when Close has finished
	wg     sync.WaitGroup     // the supervisor and each instance's goroutines

	// loadMu orders Load and Unload (read-locked, so they run concurrently)
	// against the re-load after a restart (write-locked), so that the
	// remembered sources and what the new process loaded stay the same set.
	loadMu sync.RWMutex

	mu       sync.Mutex
	info     sdk.Info
	status   Status
	sources  map[string]source
	seq      uint64
	watchers map[*watcher]struct{}

	emitMu sync.Mutex // one delivery to the watchers at a time, in order

	closeOnce sync.Once
}

// source is a remembered Load; seq orders sources by their last Load.
type source struct {
	req sdk.LoadRequest
	seq uint64
	// base is added to the restart count of the source's status changes:
	// the restarts it had under earlier processes of the plugin, each
	// restart of the plugin restarting it once more. last is the count
	// last delivered.
	base, last int
}

type watcher struct {
	emit func(sdk.Change)
	mu   sync.Mutex
	gone bool
}

func (w *watcher) send(ch sdk.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gone {
		w.emit(ch)
	}
}

var (
	_ sdk.Executor = (*Plugin)(nil)
	_ sdk.Watcher  = (*Plugin)(nil)
)

// Start launches the executor described by spec, completes the go-plugin
// handshake, calls Info, starts watching it, and supervises it until Close.
// ctx bounds the start only (as does opts.StartTimeout); the plugin lives
// until Close. The error names the executor and the cause: a missing or
// non-executable binary (fs.ErrNotExist, ErrNotExecutable), a program that
// is not an executor plugin or speaks another protocol version
// (ErrHandshake), an invalid Info answer (ErrInvalidInfo), or a start that
// took too long (ErrStartTimeout). Nothing is left running when Start
// fails.
//
// A plugin that completed its start once is restarted whenever it goes
// down, for as long as it takes. A version of its file that never did is
// given up on (ErrGaveUp): at once when trying again cannot help (another
// protocol, not a plugin, an invalid Info), else after three failed
// launches in a row. The plugin then stays in StateFailed, without a
// NextRestart, until the file changes.
func Start(ctx context.Context, spec Spec, opts Options) (*Plugin, error) {
	return start(ctx, spec, opts, &tries{})
}

// start is Start, with t the record of earlier launches of the plugin.
func start(ctx context.Context, spec Spec, opts Options, t *tries) (*Plugin, error) {
	if err := checkName(spec.Name); err != nil {
		return nil, fmt.Errorf("start executor: %w", err)
	}
	path, err := resolvePath(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("start executor %q: %w", spec.Name, err)
	}
	spec.Path = path
	opts = opts.withDefaults()
	spec.Args = slices.Clone(spec.Args)
	spec.Env = slices.Clone(spec.Env)
	p := &Plugin{
		spec:     spec,
		opts:     opts,
		log:      opts.Logger.With("executor", spec.Name),
		tries:    t,
		done:     make(chan struct{}),
		sources:  map[string]source{},
		watchers: map[*watcher]struct{}{},
		status:   Status{State: StateStarting, Since: time.Now()},
	}
	// The plugin outlives ctx, which only bounds the start.
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	inst, info, err := p.launch(ctx, life)
	if err != nil {
		cancel()
		p.wg.Wait()
		return nil, err
	}
	p.mu.Lock()
	p.info = info
	p.publishLocked(inst)
	p.mu.Unlock()
	calls, _ := inst.exec.CallsChannel()
	p.log.Info("executor started", "pid", inst.pid, "version", info.Version, "path", spec.Path,
		"protocol", inst.exec.Version(), "calls", calls)
	p.wg.Add(1)
	go p.supervise(life, inst)
	return p, nil
}

// Name returns the executor's name (Spec.Name).
func (p *Plugin) Name() string { return p.spec.Name }

// Status returns the plugin's current health.
func (p *Plugin) Status() Status {
	p.mu.Lock()
	st := p.status
	p.mu.Unlock()
	if inst := p.cur.Load(); inst != nil && st.PID == inst.pid {
		st.Calls, _ = inst.exec.CallsChannel()
	}
	return st
}

// Info implements sdk.Executor. It returns what the running process
// answered to the Info call made when it was launched.
func (p *Plugin) Info(context.Context) (sdk.Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	info := p.info
	info.Kinds = slices.Clone(info.Kinds)
	return info, nil
}

// Load implements sdk.Executor. A successful Load is remembered and
// repeated after every restart, until Unload.
func (p *Plugin) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	defs, _, err := p.load(ctx, req)
	return defs, err
}

// errLoadDeadline is the cause of the context LoadWithin bounds a Load
// with, telling its deadline from the caller's.
var errLoadDeadline = errors.New("load deadline")

// LoadWithin is Load bounded by d (not at all when d <= 0). A process that
// has not answered when d passes is taken for stuck in that Load: the
// call fails with an error wrapping ErrLoadTimeout, which says so, and the
// process is restarted (the sources it had loaded are loaded again). The
// host cannot tell a Load that honours the cancel from one that goes on
// holding what it holds, and the caller's retries would each leave one
// more behind. The caller's own ctx ending restarts nothing.
func (p *Plugin) LoadWithin(ctx context.Context, req sdk.LoadRequest, d time.Duration) (sdk.Definitions, error) {
	if d <= 0 {
		return p.Load(ctx, req)
	}
	// A timer, not a deadline: gRPC ends a call at its deadline by its
	// own clock, maybe before the context's is done and tells why.
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(d, func() { cancel(errLoadDeadline) })
	defer timer.Stop()
	defs, inst, err := p.load(lctx, req)
	if err == nil || inst == nil || ctx.Err() != nil || context.Cause(lctx) != errLoadDeadline {
		return defs, err
	}
	p.log.Warn("executor did not answer Load in time; restarting it", "source", req.Source, "pid", inst.pid, "load_timeout", d)
	inst.die(fmt.Sprintf("did not answer Load of source %q within %s", req.Source, d))
	return defs, &loadTimeoutError{exec: p.spec.Name, d: d}
}

// loadTimeoutError is LoadWithin's error for a Load not answered in time.
type loadTimeoutError struct {
	exec string
	d    time.Duration
}

func (e *loadTimeoutError) Error() string {
	return fmt.Sprintf("executor %q did not answer Load within %s; it must return from Load or honour its context; "+
		"see docs/EXECUTORS.md (its process is restarted)", e.exec, e.d)
}

func (e *loadTimeoutError) Is(target error) bool { return target == ErrLoadTimeout }

// load is Load; it also returns the instance the request went to, if any.
func (p *Plugin) load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, *instance, error) {
	p.loadMu.RLock()
	defer p.loadMu.RUnlock()
	inst := p.cur.Load()
	if inst == nil {
		return sdk.Definitions{}, nil, p.downError()
	}
	defs, err := inst.exec.Load(ctx, req)
	if err != nil {
		return defs, inst, p.callError(ctx, inst, err)
	}
	// Should inst have died meanwhile, the re-load (which needs loadMu)
	// comes after this and includes req.
	req.Spec = bytes.Clone(req.Spec)
	p.mu.Lock()
	p.seq++
	p.sources[req.Source] = source{req: req, seq: p.seq}
	p.mu.Unlock()
	return defs, inst, nil
}

// Unload implements sdk.Executor. The source is forgotten whatever the
// outcome. While the plugin is down, or when it goes down during the call,
// Unload succeeds: the source went with the process and will not be loaded
// again.
func (p *Plugin) Unload(ctx context.Context, source string) error {
	p.loadMu.RLock()
	defer p.loadMu.RUnlock()
	p.mu.Lock()
	delete(p.sources, source)
	p.mu.Unlock()
	inst := p.cur.Load()
	if inst == nil {
		return nil
	}
	err := inst.exec.Unload(ctx, source)
	if err == nil {
		return nil
	}
	err = p.callError(ctx, inst, err)
	if _, down := inst.isDown(); down && errors.Is(err, sdk.ErrPluginShutdown) {
		return nil
	}
	return err
}

// Call implements sdk.Executor. It goes to the running process; while the
// plugin is down it fails at once with an error wrapping
// sdk.ErrPluginShutdown, and so does a call in flight when the process dies.
func (p *Plugin) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	inst := p.cur.Load()
	if inst == nil {
		return nil, p.downError()
	}
	res, err := inst.exec.Call(ctx, req, call)
	if err != nil {
		return nil, p.callError(ctx, inst, err)
	}
	return res, nil
}

// Watch implements sdk.Watcher. It sends emit the changes the plugin
// reports, across restarts, and the supervisor's own (re-loaded definitions,
// source health), until ctx is done (it returns nil) or the plugin is closed
// (it returns an error wrapping ErrClosed). Several watchers may watch at
// once. Each emit runs on the plugin's goroutines, one change at a time and
// in order; it must not block for long, and must not call Close. emit is
// never called after Watch has returned.
func (p *Plugin) Watch(ctx context.Context, emit func(sdk.Change)) error {
	w := &watcher{emit: emit}
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		return fmt.Errorf("executor %q: %w", p.spec.Name, ErrClosed)
	}
	p.watchers[w] = struct{}{}
	p.mu.Unlock()

	var err error
	select {
	case <-ctx.Done():
	case <-p.done:
		err = fmt.Errorf("executor %q: %w", p.spec.Name, ErrClosed)
	}
	p.mu.Lock()
	delete(p.watchers, w)
	p.mu.Unlock()
	w.mu.Lock()
	w.gone = true
	w.mu.Unlock()
	return err
}

// Close stops supervision and kills the plugin: it is asked to shut down,
// and after KillWindow its process group (and session and descendants, see
// the package doc) is SIGKILLed, so that what it started dies with it.
// Calls in flight fail with an error wrapping ErrClosed (and so
// sdk.ErrPluginShutdown). Close waits until the process
// is reaped and every goroutine of the plugin has returned. It is
// idempotent and always returns nil.
func (p *Plugin) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed.Store(true)
		inst := p.cur.Swap(nil)
		p.status = Status{State: StateStopped, Restarts: p.status.Restarts, LastError: p.status.LastError, Since: time.Now()}
		p.mu.Unlock()
		p.cancel()
		if inst != nil {
			p.teardown(inst, "closed")
		}
		p.wg.Wait()
		close(p.done)
		p.log.Info("executor stopped")
	})
	return nil
}

// downError is the error of a request that found the plugin down.
func (p *Plugin) downError() error {
	if p.closed.Load() {
		return fmt.Errorf("executor %q: %w", p.spec.Name, ErrClosed)
	}
	st := p.Status()
	return fmt.Errorf("executor %q is %s (%s): %w", p.spec.Name, st.State, st.LastError, sdk.ErrPluginShutdown)
}

// callError names the executor in the error of a request that reached inst,
// and for a transport failure says why the process went down. A transport
// failure of a process that still runs gets it health-checked.
func (p *Plugin) callError(ctx context.Context, inst *instance, err error) error {
	if ctx.Err() != nil || !errors.Is(err, sdk.ErrPluginShutdown) {
		return err
	}
	t := time.NewTimer(exitGrace)
	select {
	case <-inst.down:
	case <-t.C:
		// Not seen exiting yet: a health check tells a process that is
		// gone (it goes down, with the exit as its cause) from one that
		// still answers.
		select {
		case <-inst.down:
		case <-inst.checkAlive():
		case <-ctx.Done():
		}
	}
	t.Stop()
	cause, down := inst.isDown()
	switch {
	case down && p.closed.Load():
		return fmt.Errorf("executor %q: %w", p.spec.Name, ErrClosed)
	case down:
		return fmt.Errorf("executor %q %s: %w", p.spec.Name, cause, sdk.ErrPluginShutdown)
	}
	return fmt.Errorf("executor %q: %w", p.spec.Name, err)
}

// publishLocked makes inst the running process. p.mu must be held.
func (p *Plugin) publishLocked(inst *instance) {
	p.cur.Store(inst)
	p.status = Status{
		State:     StateRunning,
		PID:       inst.pid,
		Protocol:  inst.exec.Version(),
		Restarts:  p.status.Restarts,
		LastError: p.status.LastError,
		Since:     time.Now(),
	}
}

// deliver sends ch to every watcher.
func (p *Plugin) deliver(ch sdk.Change) {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	p.mu.Lock()
	if ch.Status != nil {
		if src, ok := p.sources[ch.Source]; ok {
			st := *ch.Status
			st.Restarts += src.base
			src.last = st.Restarts
			p.sources[ch.Source] = src
			ch.Status = &st
		}
	}
	ws := make([]*watcher, 0, len(p.watchers))
	for w := range p.watchers {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		w.send(ch)
	}
}
