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
	thirdParty map[string]host.Spec
	infos      map[string]sdk.Info
}

func newExecutors(exe string, log *slog.Logger, h sdk.Host) *executors {
	return &executors{
		exe:        exe,
		log:        log,
		host:       h,
		mgr:        host.NewManager(host.Options{Logger: log, Host: h}),
		running:    map[string]sdk.Executor{},
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

// get returns the running executor, starting it on first use.
func (e *executors) get(ctx context.Context, name string, inprocess bool) (sdk.Executor, sdk.Info, error) {
	key := name
	if inprocess {
		key += "@inprocess"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ex, ok := e.running[key]; ok {
		return ex, e.infos[key], nil
	}
	var ex sdk.Executor
	switch spec, third := e.thirdParty[name]; {
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
		return nil, sdk.Info{}, fmt.Errorf("executor %q: info: %w", name, err)
	}
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
	return ex, info, nil
}

// close kills every executor process and closes in-process ones.
func (e *executors) close() error {
	e.mu.Lock()
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
