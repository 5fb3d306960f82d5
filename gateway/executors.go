package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// executors starts executors on first use and keeps one instance per
// (name, isolation).
type executors struct {
	exe  string
	log  *slog.Logger
	mgr  *host.Manager
	host sdk.Host

	// set by Gateway.Start before first use
	runCtx context.Context
	wg     *sync.WaitGroup
	watch  func(exec string, ch sdk.Change)

	mu         sync.Mutex
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

func newExecutors(exe string, log *slog.Logger, h sdk.Host, maxProtocol int) *executors {
	return &executors{
		exe:        exe,
		log:        log,
		host:       h,
		mgr:        host.NewManager(host.Options{Logger: log, Host: h, MaxProtocol: maxProtocol}),
		running:    map[string]sdk.Executor{},
		starting:   map[string]*startCall{},
		thirdParty: map[string]host.Spec{},
		infos:      map[string]sdk.Info{},
	}
}

// discover records the third-party executors found in dirs.
func (e *executors) discover(dirs []string) []string {
	specs, errs := host.Discover(dirs)
	for _, err := range errs {
		e.log.Warn("plugin skipped", "err", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		if builtin.Has(s.Name) {
			e.log.Warn("plugin skipped: its name is a built-in executor's", "plugin", s.Path, "name", s.Name)
			continue
		}
		e.thirdParty[s.Name] = s
		names = append(names, s.Name)
	}
	return names
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
		p, err := e.mgr.Start(ctx, spec)
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
			u.SetHost(e.host)
		}
		ex = impl
	default:
		if !builtin.Has(name) {
			return nil, sdk.Info{}, fmt.Errorf("%w %q (built-in: %v; third-party ones come from plugins.dirs)", ErrUnknownExecutor, name, builtin.Names())
		}
		p, err := e.mgr.Start(ctx, host.Spec{Name: name, Path: e.exe, Args: []string{"plugin", "serve", name}})
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
			if err != nil && !errors.Is(err, context.Canceled) {
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
	e.mu.Unlock()
	var errs []error
	for _, ex := range running {
		if c, ok := ex.(io.Closer); ok {
			if _, isPlugin := ex.(*host.Plugin); !isPlugin {
				errs = append(errs, c.Close())
			}
		}
	}
	errs = append(errs, e.mgr.Close())
	return errors.Join(errs...)
}
