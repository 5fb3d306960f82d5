package host

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// Manager holds the executor plugins of a gateway by name. It is safe for
// concurrent use. Close kills every plugin it started, including ones whose
// Start is still in progress, so nothing outlives it.
type Manager struct {
	opts Options

	mu       sync.Mutex
	plugins  map[string]*Plugin
	starting map[string]context.CancelFunc
	tries    map[string]*tries // by name: how its launches went, across Starts
	closed   bool
	startWG  sync.WaitGroup
}

// NewManager returns a manager that starts plugins with opts.
func NewManager(opts Options) *Manager {
	return &Manager{opts: opts, plugins: map[string]*Plugin{}, starting: map[string]context.CancelFunc{}, tries: map[string]*tries{}}
}

// Start starts the executor described by spec (see the package-level Start)
// and keeps it under spec.Name. Names are unique: starting a second executor
// of a name fails with ErrDuplicate. After Close it fails with ErrClosed.
//
// The manager remembers how the failed Starts of a name went: once it gave
// up on the plugin's file (ErrGaveUp), Start fails at once with the same
// error, without running the file, until the file changes or
// ForgetFailures is called.
func (m *Manager) Start(ctx context.Context, spec Spec) (*Plugin, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("start executor %q: %w", spec.Name, ErrClosed)
	}
	if _, ok := m.plugins[spec.Name]; ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("start executor %q: %w", spec.Name, ErrDuplicate)
	}
	if _, ok := m.starting[spec.Name]; ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("start executor %q: %w", spec.Name, ErrDuplicate)
	}
	m.starting[spec.Name] = cancel
	t := m.tries[spec.Name]
	if t == nil {
		t = &tries{}
		m.tries[spec.Name] = t
	}
	m.startWG.Add(1)
	m.mu.Unlock()
	defer m.startWG.Done()

	p, err := start(ctx, spec, m.opts, t)

	m.mu.Lock()
	delete(m.starting, spec.Name)
	if err == nil && m.closed {
		m.mu.Unlock()
		_ = p.Close()
		return nil, fmt.Errorf("start executor %q: %w", spec.Name, ErrClosed)
	}
	if err == nil {
		m.plugins[spec.Name] = p
	}
	m.mu.Unlock()
	return p, err
}

// ForgetFailures makes the plugins the manager gave up on (ErrGaveUp)
// startable again, as if their files had changed: the next Start of one
// runs its file again, and so does, within a second, the supervisor of a
// running plugin that was waiting for its file to change. A gateway may
// call it when it reloads its configuration, so that a reload retries
// them.
func (m *Manager) ForgetFailures() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.tries {
		t.reset()
	}
}

// Get returns the executor started under name, whatever its state.
func (m *Manager) Get(name string) (*Plugin, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plugins[name]
	return p, ok
}

// All returns the started executors, sorted by name.
func (m *Manager) All() []*Plugin {
	m.mu.Lock()
	ps := make([]*Plugin, 0, len(m.plugins))
	for _, p := range m.plugins {
		ps = append(ps, p)
	}
	m.mu.Unlock()
	slices.SortFunc(ps, func(a, b *Plugin) int { return cmp.Compare(a.Name(), b.Name()) })
	return ps
}

// Close aborts starts in progress, closes every plugin at once, and returns
// when all of them are gone. It is idempotent and always returns nil.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	for _, cancel := range m.starting {
		cancel()
	}
	ps := make([]*Plugin, 0, len(m.plugins))
	for _, p := range m.plugins {
		ps = append(ps, p)
	}
	clear(m.plugins)
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Close()
		}()
	}
	wg.Wait()
	m.startWG.Wait()
	return nil
}
