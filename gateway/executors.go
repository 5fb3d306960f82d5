package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// executors starts executors on first use and keeps one instance per
// (name, isolation). Each executor run as a process has a host.Manager of
// its own, so that its Host callbacks name it (hostLog) and a plugin that
// left the plugins dirs can be stopped and its name used again.
type executors struct {
	exe string
	log *slog.Logger

	// set by Gateway.Start before first use
	runCtx context.Context
	wg     *sync.WaitGroup
	watch  func(exec string, ch sdk.Change)

	mu sync.Mutex
	// opts are the host options of the managers created from now on
	// (Host aside, which is each executor's own).
	opts       host.Options
	mgrs       map[string]*host.Manager // by executor name
	running    map[string]sdk.Executor
	starting   map[string]*startCall // starts in flight, by key
	thirdParty map[string]host.Spec
	infos      map[string]sdk.Info
	closed     bool
}

// startCall is one executor start that every caller asking for the same
// executor meanwhile waits for; different executors start in parallel.
type startCall struct {
	done chan struct{}
	ex   sdk.Executor
	info sdk.Info
	err  error
}

// newExecutors returns the executors of a gateway: built-in ones run as
// exe, all of them log to log, and plugins get killWindow to stop (0: the
// host's default).
func newExecutors(exe string, log *slog.Logger, maxProtocol int, killWindow time.Duration) *executors {
	return &executors{
		exe:        exe,
		log:        log,
		opts:       host.Options{Logger: log, MaxProtocol: maxProtocol, KillWindow: killWindow},
		mgrs:       map[string]*host.Manager{},
		running:    map[string]sdk.Executor{},
		starting:   map[string]*startCall{},
		thirdParty: map[string]host.Spec{},
		infos:      map[string]sdk.Info{},
	}
}

// setKillWindow sets the kill window of the plugins started from now on;
// a running plugin keeps the one it was told at its start.
func (e *executors) setKillWindow(d time.Duration) {
	e.mu.Lock()
	e.opts.KillWindow = d
	e.mu.Unlock()
}

// host is the Host of the executor name: the gateway's log, naming it.
func (e *executors) host(name string) sdk.Host {
	return hostLog{e.log.With("executor", name)}
}

// manager returns the manager of the executor of spec (a third-party one
// when third), made on first use. It fails after close, and for a plugin
// that left the plugins dirs meanwhile (dropPlugin).
func (e *executors) manager(spec host.Spec, third bool) (*host.Manager, error) {
	name := spec.Name
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if cur, ok := e.thirdParty[name]; third && (!ok || cur.Path != spec.Path) {
		return nil, fmt.Errorf("executor plugin %q (%s) left the plugins dirs", name, spec.Path)
	}
	m := e.mgrs[name]
	if m == nil {
		opts := e.opts
		opts.Host = e.host(name)
		m = host.NewManager(opts)
		e.mgrs[name] = m
	}
	return m, nil
}

// setPlugins makes specs the third-party executors: ones new or changed
// are started on first use; for the others, see dropPlugin.
func (e *executors) setPlugins(specs []host.Spec) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range specs {
		e.thirdParty[s.Name] = s
	}
}

// dropPlugin stops the third-party executor name, when it runs, and
// forgets it: its name can be started again, from another spec. It
// returns once the process is gone (the kill window at most).
func (e *executors) dropPlugin(name string) {
	e.mu.Lock()
	m := e.mgrs[name]
	delete(e.mgrs, name)
	delete(e.thirdParty, name)
	delete(e.running, name)
	delete(e.infos, name)
	e.mu.Unlock()
	if m != nil {
		_ = m.Close()
	}
}

// forgetFailures lets the plugins the host gave up on (host.ErrGaveUp)
// start again, as after a change of their files.
func (e *executors) forgetFailures() {
	e.mu.Lock()
	ms := slices.Collect(maps.Values(e.mgrs))
	e.mu.Unlock()
	for _, m := range ms {
		m.ForgetFailures()
	}
}

// plugins returns the executor processes started so far, sorted by name.
func (e *executors) plugins() []*host.Plugin {
	e.mu.Lock()
	ms := slices.Collect(maps.Values(e.mgrs))
	e.mu.Unlock()
	var ps []*host.Plugin
	for _, m := range ms {
		ps = append(ps, m.All()...)
	}
	slices.SortFunc(ps, func(a, b *host.Plugin) int { return strings.Compare(a.Name(), b.Name()) })
	return ps
}

// get returns the running executor, starting it on first use. Callers
// that ask for an executor while it starts wait for that start.
func (e *executors) get(ctx context.Context, name string, inprocess bool) (sdk.Executor, sdk.Info, error) {
	key := name
	if inprocess {
		key += "@inprocess"
	}
	e.mu.Lock()
	if ex, ok := e.running[key]; ok {
		info := e.infos[key]
		e.mu.Unlock()
		return ex, info, nil
	}
	if e.closed {
		e.mu.Unlock()
		return nil, sdk.Info{}, ErrClosed
	}
	if st, ok := e.starting[key]; ok {
		e.mu.Unlock()
		select {
		case <-st.done:
			return st.ex, st.info, st.err
		case <-ctx.Done():
			return nil, sdk.Info{}, ctx.Err()
		}
	}
	st := &startCall{done: make(chan struct{})}
	e.starting[key] = st
	spec, third := e.thirdParty[name]
	e.mu.Unlock()

	ex, info, err := e.start(ctx, name, inprocess, spec, third)
	e.mu.Lock()
	delete(e.starting, key)
	if err == nil && e.closed {
		// The gateway closed while this one started: it must not outlive it.
		if c, ok := ex.(io.Closer); ok {
			_ = c.Close()
		}
		ex, err = nil, ErrClosed
	}
	if err == nil {
		e.publishLocked(key, ex, info)
	}
	e.mu.Unlock()
	st.ex, st.info, st.err = ex, info, err
	close(st.done)
	return ex, info, err
}

// prestart starts the executors in wants (name -> in process) in the
// background, so that their processes start while the gateway
// does other work; the first get of each joins its start.
func (e *executors) prestart(ctx context.Context, wants map[string]bool) {
	for name, inprocess := range wants {
		go func() { _, _, _ = e.get(ctx, name, inprocess) }()
	}
}

// start launches one executor (third-party when third, from spec) and asks
// for its Info.
func (e *executors) start(ctx context.Context, name string, inprocess bool, spec host.Spec, third bool) (sdk.Executor, sdk.Info, error) {
	var ex sdk.Executor
	switch {
	case third:
		if inprocess {
			return nil, sdk.Info{}, fmt.Errorf("executor %q is a plugin binary and cannot run in process", name)
		}
		p, err := e.startPlugin(ctx, spec, true)
		if err != nil {
			return nil, sdk.Info{}, err
		}
		ex = p
	case inprocess:
		impl, ok := builtin.New(name, e.log.With("executor", name))
		if !ok {
			return nil, sdk.Info{}, fmt.Errorf("%w %q", ErrUnknownExecutor, name)
		}
		if u, ok := impl.(sdk.HostUser); ok {
			u.SetHost(e.host(name))
		}
		ex = impl
	default:
		if !builtin.Has(name) {
			return nil, sdk.Info{}, fmt.Errorf("%w %q (built-in: %v; third-party ones come from plugins.dirs)", ErrUnknownExecutor, name, builtin.Names())
		}
		p, err := e.startPlugin(ctx, host.Spec{Name: name, Path: e.exe, Args: []string{"plugin", "serve", name}}, false)
		if err != nil {
			return nil, sdk.Info{}, err
		}
		ex = p
	}
	info, err := ex.Info(ctx)
	if err != nil {
		if c, ok := ex.(io.Closer); ok {
			_ = c.Close()
		}
		return nil, sdk.Info{}, fmt.Errorf("executor %q: info: %w", name, err)
	}
	return ex, info, nil
}

// startPlugin starts the executor process of spec (a third-party one when
// third) under its manager.
func (e *executors) startPlugin(ctx context.Context, spec host.Spec, third bool) (*host.Plugin, error) {
	m, err := e.manager(spec, third)
	if err != nil {
		return nil, err
	}
	return m.Start(ctx, spec)
}

// publishLocked makes a started executor the running one and starts watching it.
// e.mu must be held.
func (e *executors) publishLocked(key string, ex sdk.Executor, info sdk.Info) {
	e.running[key] = ex
	e.infos[key] = info
	if w, ok := ex.(sdk.Watcher); ok && e.runCtx != nil {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			err := w.Watch(e.runCtx, func(ch sdk.Change) { e.watch(key, ch) })
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, host.ErrClosed) {
				e.log.Warn("executor watch ended", "executor", key, "err", err)
			}
		}()
	}
}

// close kills every executor process and closes in-process ones.
func (e *executors) close() error {
	e.mu.Lock()
	e.closed = true
	running := e.running
	e.running = map[string]sdk.Executor{}
	ms := slices.Collect(maps.Values(e.mgrs))
	e.mu.Unlock()
	var errs []error
	for _, ex := range running {
		if c, ok := ex.(io.Closer); ok {
			if _, isPlugin := ex.(*host.Plugin); !isPlugin {
				errs = append(errs, c.Close())
			}
		}
	}
	// Every plugin at once: each may take its kill window.
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() { _ = m.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// hostLog writes an executor's Host.Log calls into the gateway's log; log
// names the executor.
type hostLog struct{ log *slog.Logger }

func (h hostLog) Log(ctx context.Context, level, msg string, attrs map[string]string) error {
	l, known := logLevel(level)
	args := make([]any, 0, 2*len(attrs)+2)
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		args = append(args, k, attrs[k])
	}
	if !known {
		args = append(args, "given_level", level)
	}
	h.log.Log(ctx, l, msg, args...)
	return nil
}

// logLevel maps the level an executor logs at to slog's: debug, info, warn
// and error in any case (or slog's own forms, such as "WARN+2"), and the
// common aliases trace (debug), notice (info), warning (warn), fatal,
// critical and panic (error). known is false for any other name, logged at
// info.
func logLevel(name string) (l slog.Level, known bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "notice":
		return slog.LevelInfo, true
	case "trace":
		return slog.LevelDebug, true
	case "warning":
		return slog.LevelWarn, true
	case "err", "fatal", "critical", "crit", "panic", "alert", "emergency":
		return slog.LevelError, true
	}
	if l.UnmarshalText([]byte(name)) == nil {
		return l, true
	}
	return slog.LevelInfo, false
}
