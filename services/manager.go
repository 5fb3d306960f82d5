package services

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/graph"
)

// Defaults of Options.
const (
	DefaultHealthTTL    = 2 * time.Second
	DefaultStartTimeout = 2 * time.Minute
	DefaultStopTimeout  = 10 * time.Second
	// imageTimeout bounds a pull or a build.
	imageTimeout = 15 * time.Minute
)

// Options configure a Manager.
type Options struct {
	// Project names this gateway's objects: a label on each and a part of
	// every name. Two gateways with different projects never see each
	// other's containers. Required; see ValidProject.
	Project string
	// Engine is the container engine; nil connects to Docker (NewDockerEngine).
	Engine Engine
	// Logger receives the manager's log; nil discards it. Environment values
	// are never logged.
	Logger *slog.Logger
	// AllowBinds are the host folders bind mounts may come from (absolute).
	AllowBinds []string
	// HealthTTL is how long a healthy state is trusted without asking the
	// engine again: the bound on staleness of Ensure's fast path.
	HealthTTL time.Duration
	// StartTimeout bounds the wait for a container to become healthy, unless
	// its Spec sets its own.
	StartTimeout time.Duration
	// StopTimeout is how long a container gets to stop before it is killed.
	StopTimeout time.Duration
	// CLI is the command line that runs skillgate on this config, such as
	// "skillgate -c skillgate.yaml"; the hints of errors append
	// "services up NAME" or "services logs NAME" to it. The default is
	// "skillgate".
	CLI string
	// Owner is the owner id (NewOwner) the containers this manager creates
	// are labelled with; its Close removes those (and those whose owner is
	// gone) unless another process still uses the project. A gateway gives
	// the managers of its reloaded configs the same one. Empty means a new
	// one.
	Owner string
	// Detach makes the containers this manager creates outlive it: they
	// carry no owner, so no manager's Close removes them, only Down or
	// Remove (as for `skillgate services up`). Its Close removes nothing.
	Detach bool
	// Progress, when set, receives the progress of pulls and builds started
	// on demand by Ensure.
	Progress func(Progress)
	// KeepNetwork keeps the project's network when every service is
	// downed (Down with no names): containers that are not services, such
	// as image servers that require them, join it too and must find it
	// when they restart. Close and HandOver still remove it when nothing
	// of the project is left on it.
	KeepNetwork bool
	// LockDir is the folder of the lock files that make the skillgate
	// processes of this machine take turns to build, create or adopt a
	// service's container (gateway replicas that start at once). The
	// default is the gateway's state folder: $XDG_STATE_HOME/skillgate/locks,
	// else ~/.local/state/skillgate/locks, else one in the temp folder.
	LockDir string
}

// Manager runs a project's services: it starts them on demand, once, waits
// until they are healthy, hands out the variables that reach them, and stops
// them on Close. All methods are safe for concurrent use.
type Manager struct {
	opts  Options
	eng   Engine
	log   *slog.Logger
	owner string   // "" when Detach
	names []string // declared services, sorted
	svcs  map[string]*svc

	runCtx context.Context // ends at Close; bounds every start
	cancel context.CancelFunc
	wg     sync.WaitGroup

	netMu sync.Mutex // orders network creation

	// lockWait, when set (by tests), is called when a start finds another
	// holding the service's lock, before it waits.
	lockWait func(service string)
	lockWarn sync.Once // the warning that a lock could not be taken

	mu     sync.Mutex
	closed bool
}

// svc is one declared service and what the manager knows of it.
type svc struct {
	spec   *Spec
	image  string   // the tag to run
	env    []string // the container's environment, KEY=value
	hash   string   // LabelConfig value
	wiring []string // env keys handed to users

	snap atomic.Pointer[snapshot]

	mu     sync.Mutex
	flight *flight
	// lastPorts are the host ports it was last seen on: a recreated
	// container asks for them again, so the variables handed out stay true.
	lastPorts map[string]int
}

// snapshot is the last known state of a service.
type snapshot struct {
	state   string // see Status.State
	health  string
	id      string
	ports   map[string]int
	env     map[string]string
	lastErr string
	hlog    string
	checked time.Time
}

func (s *snapshot) ready() bool { return s != nil && s.state == StateHealthy }

// flight is one start in progress; every caller that needs the service
// while it runs waits for the same result.
type flight struct {
	done    chan struct{}
	err     error
	rebuild bool

	mu   sync.Mutex
	subs []func(Progress)
}

func (f *flight) progress(p Progress) {
	f.mu.Lock()
	subs := slices.Clone(f.subs)
	f.mu.Unlock()
	for _, fn := range subs {
		fn(p)
	}
}

func (f *flight) subscribe(fn func(Progress)) {
	if fn == nil {
		return
	}
	f.mu.Lock()
	f.subs = append(f.subs, fn)
	f.mu.Unlock()
}

// States a service can be in (Status.State).
const (
	// StateUnknown: not looked at yet.
	StateUnknown = "unknown"
	// StateStopped: no container, or a container that is not running.
	StateStopped = "stopped"
	// StateStarting: running, health check not passed yet.
	StateStarting = "starting"
	// StateHealthy: running and healthy (or running without a health check).
	StateHealthy = "healthy"
	// StateUnhealthy: running, health check failing.
	StateUnhealthy = "unhealthy"
	// StateFailed: the last start failed; LastError says why.
	StateFailed = "failed"
)

// New checks specs and returns a manager for them. It does not contact the
// engine until a method needs it.
func New(specs []Spec, opts Options) (*Manager, error) {
	if !ValidProject(opts.Project) {
		return nil, fmt.Errorf("%w: project %q must be lower-case letters, digits, _ or -, starting with a letter or digit", ErrInvalidSpec, opts.Project)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.HealthTTL <= 0 {
		opts.HealthTTL = DefaultHealthTTL
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.CLI == "" {
		opts.CLI = "skillgate"
	}
	if opts.LockDir == "" {
		opts.LockDir = defaultLockDir()
	}
	switch {
	case opts.Detach:
		opts.Owner = ""
	case opts.Owner == "":
		opts.Owner = NewOwner()
	case !ownerRe().MatchString(opts.Owner):
		return nil, fmt.Errorf("%w: owner %q is not an owner id; use NewOwner", ErrInvalidSpec, opts.Owner)
	}
	m := &Manager{opts: opts, eng: opts.Engine, log: opts.Logger, owner: opts.Owner, svcs: map[string]*svc{}}
	var errs []error
	for i := range specs {
		sp := specs[i]
		sp.Ports = slices.Clone(sp.Ports)
		for j := range sp.Ports {
			if sp.Ports[j].Protocol == "" {
				sp.Ports[j].Protocol = "tcp"
			}
		}
		if err := sp.check(opts.AllowBinds); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := m.svcs[sp.Name]; dup {
			errs = append(errs, fmt.Errorf("%w: service %s is defined twice", ErrInvalidSpec, sp.Name))
			continue
		}
		s := &svc{spec: &sp, image: sp.Image}
		if s.image == "" {
			s.image = "skillgate-" + opts.Project + "-" + strings.ToLower(sp.Name) + ":latest"
		}
		s.snap.Store(&snapshot{state: StateUnknown})
		m.svcs[sp.Name] = s
		m.names = append(m.names, sp.Name)
	}
	slices.Sort(m.names)
	for _, n := range m.names {
		s := m.svcs[n]
		for _, d := range slices.Sorted(maps.Keys(s.spec.DependsOn)) {
			if m.svcs[d] == nil {
				errs = append(errs, fmt.Errorf("%w: service %s depends on unknown service %q", ErrInvalidSpec, n, d))
			}
			if c := s.spec.DependsOn[d]; c != "" && c != ConditionStarted && c != ConditionHealthy {
				errs = append(errs, fmt.Errorf("%w: service %s: condition %q is not %s or %s", ErrInvalidSpec, n, c, ConditionStarted, ConditionHealthy))
			}
		}
	}
	if len(errs) == 0 {
		if cyc := m.cycle(); cyc != nil {
			errs = append(errs, fmt.Errorf("%w: services depend on each other in a cycle: %s", ErrInvalidSpec, strings.Join(cyc, " -> ")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, n := range m.names {
		m.svcs[n].prepare(m)
	}
	m.runCtx, m.cancel = context.WithCancel(context.Background())
	return m, nil
}

// prepare computes what the container is created from.
func (s *svc) prepare(m *Manager) {
	env := map[string]string{}
	// A dependency on the same project network is reachable by name.
	for d := range s.spec.DependsOn {
		dep := m.svcs[d].spec
		if s.spec.Network != "" || dep.Network != "" || len(dep.Ports) == 0 {
			continue
		}
		p := EnvPrefix(d)
		env[p+"_HOST"] = d
		env[p+"_PORT"] = strconv.Itoa(dep.Ports[0].Container)
	}
	maps.Copy(env, s.spec.Env)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		s.env = append(s.env, k+"="+env[k])
	}
	view := *s.spec
	view.Env = env
	s.hash = view.hash(s.image)
	p := EnvPrefix(s.spec.Name)
	if len(s.spec.Ports) > 0 {
		s.wiring = append(s.wiring, p+"_HOST", p+"_PORT")
	}
	for _, port := range s.spec.Ports {
		s.wiring = append(s.wiring, p+"_PORT_"+portSuffix(port))
	}
}

func portSuffix(p Port) string {
	s := strconv.Itoa(p.Container)
	if p.Protocol == "udp" {
		s += "_UDP"
	}
	return s
}

func portKey(p Port) string { return strconv.Itoa(p.Container) + "/" + cmpOr(p.Protocol, "tcp") }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// cycle returns the services of one depends_on cycle, or nil. Every
// dependency is known (New checks that first).
func (m *Manager) cycle() []string {
	return graph.Cycle(m.names, func(n string) []string {
		return slices.Sorted(maps.Keys(m.svcs[n].spec.DependsOn))
	})
}

// Project returns the manager's project.
func (m *Manager) Project() string { return m.opts.Project }

// Names returns the declared services, sorted.
func (m *Manager) Names() []string { return slices.Clone(m.names) }

// Has reports whether name is a declared service.
func (m *Manager) Has(name string) bool { return m.svcs[name] != nil }

// engine returns the engine, connecting to Docker on first use.
func (m *Manager) engine() (Engine, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if m.eng == nil {
		e, err := NewDockerEngine()
		if err != nil {
			return nil, err
		}
		m.eng = e
	}
	return m.eng, nil
}

func (m *Manager) lookup(names []string) ([]*svc, error) {
	if len(names) == 0 {
		names = m.names
	}
	out := make([]*svc, 0, len(names))
	for _, n := range names {
		s := m.svcs[n]
		if s == nil {
			known := "none are defined (add services: to the config)"
			if len(m.names) > 0 {
				known = "the services are " + strings.Join(m.names, ", ")
			}
			return nil, fmt.Errorf("%w %q; %s", ErrUnknownService, n, known)
		}
		out = append(out, s)
	}
	return out, nil
}

// Ensure makes sure every named service runs and is healthy, starting those
// that are not (unless their policy is manual), and returns the variables
// that reach them: for each service NAME (upper-cased, - as _) with ports,
// NAME_HOST (127.0.0.1), NAME_PORT (the first port's host port) and
// NAME_PORT_<container port> for every port (NAME_PORT_53_UDP for udp).
//
// A service seen healthy less than Options.HealthTTL ago is not asked
// about again, so a call on a hot path costs no I/O. Concurrent callers
// needing a stopped service start it once and share the result. The
// returned map is the caller's.
func (m *Manager) Ensure(ctx context.Context, names ...string) (map[string]string, error) {
	if len(names) == 1 {
		// The hot path: one service, healthy, recently seen.
		if s := m.svcs[names[0]]; s != nil {
			if sn := s.snap.Load(); sn.ready() && time.Since(sn.checked) < m.opts.HealthTTL {
				return maps.Clone(sn.env), nil
			}
		}
	}
	svcs, err := m.lookup(names)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	env := map[string]string{}
	for _, s := range svcs {
		e, err := m.ensure(ctx, s, true, nil, false)
		if err != nil {
			return nil, err
		}
		maps.Copy(env, e)
	}
	return env, nil
}

// Up starts the named services (every service when names is empty), with
// their dependencies, whatever their policy, and waits until they are
// healthy. progress, when not nil, receives pull and build progress. With
// rebuild, images with a build context are built again first.
func (m *Manager) Up(ctx context.Context, progress func(Progress), rebuild bool, names ...string) error {
	svcs, err := m.lookup(names)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range svcs {
		if _, err := m.ensure(ctx, s, false, progress, rebuild); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ensure brings s up (or checks it, for a manual service on demand) and
// returns its wiring variables.
func (m *Manager) ensure(ctx context.Context, s *svc, onDemand bool, progress func(Progress), rebuild bool) (map[string]string, error) {
	if sn := s.snap.Load(); !rebuild && sn.ready() && time.Since(sn.checked) < m.opts.HealthTTL {
		return maps.Clone(sn.env), nil
	}
	if onDemand && s.spec.Manual {
		return m.checkManual(ctx, s)
	}
	for attempt := 0; ; attempt++ {
		f := m.join(s, progress, rebuild)
		if f == nil {
			return nil, ErrClosed
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("service %s: %w", s.spec.Name, ctx.Err())
		}
		if f.err != nil {
			if m.runCtx.Err() != nil {
				// The start ended because m was closed or handed over,
				// not because the service failed: say so, so that a
				// caller can ask the manager that took over.
				return nil, fmt.Errorf("service %s: %w", s.spec.Name, ErrClosed)
			}
			return nil, f.err
		}
		if rebuild && !f.rebuild && attempt == 0 {
			continue // joined a plain start; the rebuild still has to happen
		}
		if sn := s.snap.Load(); sn.ready() {
			return maps.Clone(sn.env), nil
		}
		if attempt > 1 {
			return nil, fmt.Errorf("service %s: %w (state %s)", s.spec.Name, ErrUnhealthy, s.snap.Load().state)
		}
		rebuild = false
	}
}

// join returns the start in flight for s, or begins one.
func (m *Manager) join(s *svc, progress func(Progress), rebuild bool) *flight {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	s.mu.Lock()
	if f := s.flight; f != nil {
		s.mu.Unlock()
		m.mu.Unlock()
		f.subscribe(progress)
		return f
	}
	f := &flight{done: make(chan struct{}), rebuild: rebuild}
	f.subscribe(progress)
	f.subscribe(m.opts.Progress)
	s.flight = f
	s.mu.Unlock()
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		err := m.bringUp(m.runCtx, s, f, rebuild)
		if err != nil {
			m.setFailed(s, err)
		}
		s.mu.Lock()
		s.flight = nil
		s.mu.Unlock()
		f.err = err
		close(f.done)
	}()
	return f
}

func (m *Manager) setFailed(s *svc, err error) {
	old := s.snap.Load()
	n := *old
	n.state, n.lastErr, n.checked = StateFailed, err.Error(), time.Now()
	s.snap.Store(&n)
}

// checkManual looks at a manual service without starting it.
func (m *Manager) checkManual(ctx context.Context, s *svc) (map[string]string, error) {
	eng, err := m.engine()
	if err != nil {
		return nil, err
	}
	if err := m.mark(ctx, eng); err != nil {
		return nil, fmt.Errorf("service %s: %w", s.spec.Name, err)
	}
	c, err := eng.Inspect(ctx, ContainerName(m.opts.Project, s.spec.Name))
	if err == nil && owned(c.Labels, m.opts.Project) {
		m.observe(s, c)
		if sn := s.snap.Load(); sn.ready() {
			return maps.Clone(sn.env), nil
		}
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("service %s: %w", s.spec.Name, err)
	}
	state := s.snap.Load().state
	return nil, fmt.Errorf("service %s: %w (state %s) and its policy is manual; start it with: %s",
		s.spec.Name, ErrNotRunning, state, m.hint("up", s.spec.Name))
}

// hint is the command line that applies verb to service name, such as
// "skillgate -c skillgate.yaml services logs kv".
func (m *Manager) hint(verb, name string) string {
	return m.opts.CLI + " services " + verb + " " + name
}

// observe records what a container says about s.
func (m *Manager) observe(s *svc, c Container) {
	n := &snapshot{id: c.ID, ports: c.Ports, health: c.Health, hlog: c.HealthLog, checked: time.Now()}
	switch {
	case !c.Running():
		n.state = StateStopped
	case c.Health == "" || c.Health == "healthy":
		n.state = StateHealthy
	case c.Health == "unhealthy":
		n.state = StateUnhealthy
	default:
		n.state = StateStarting
	}
	n.env = m.wiringEnv(s, c.Ports)
	if len(c.Ports) > 0 {
		s.mu.Lock()
		s.lastPorts = maps.Clone(c.Ports)
		s.mu.Unlock()
	}
	if old := s.snap.Load(); n.state != StateHealthy {
		n.lastErr = old.lastErr
	}
	s.snap.Store(n)
}

// NetworkWiring returns the variables that reach the named services from a
// container on the project's network (see ServerContainer.ProjectNetwork):
// NAME_HOST is the service's name there, the ports are the container's. It
// starts nothing (Ensure does). A service on another network (network:
// none or bridge) or without ports cannot be reached that way.
func (m *Manager) NetworkWiring(names ...string) (map[string]string, error) {
	svcs, err := m.lookup(names)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, s := range svcs {
		n := s.spec.Name
		switch {
		case s.spec.Network != "":
			return nil, fmt.Errorf("%w: service %s is on network %s, not the project's: a container reaches only services on the project's network", ErrInvalidSpec, n, s.spec.Network)
		case len(s.spec.Ports) == 0:
			return nil, fmt.Errorf("%w: service %s declares no ports to reach it on", ErrInvalidSpec, n)
		}
		p := EnvPrefix(n)
		env[p+"_HOST"] = n
		for i, port := range s.spec.Ports {
			cp := strconv.Itoa(port.Container)
			if i == 0 {
				env[p+"_PORT"] = cp
			}
			env[p+"_PORT_"+portSuffix(port)] = cp
		}
	}
	return env, nil
}

// wiringEnv returns the variables that reach s through its published ports.
func (m *Manager) wiringEnv(s *svc, ports map[string]int) map[string]string {
	env := map[string]string{}
	p := EnvPrefix(s.spec.Name)
	for i, port := range s.spec.Ports {
		host, ok := ports[portKey(port)]
		if !ok {
			continue
		}
		hp := strconv.Itoa(host)
		env[p+"_HOST"] = "127.0.0.1"
		if i == 0 {
			env[p+"_PORT"] = hp
		}
		env[p+"_PORT_"+portSuffix(port)] = hp
	}
	return env
}

// bringUp runs in a flight: dependencies, image, container, health.
func (m *Manager) bringUp(ctx context.Context, s *svc, f *flight, rebuild bool) error {
	eng, err := m.engine()
	if err != nil {
		return fmt.Errorf("service %s: %w", s.spec.Name, err)
	}
	name := s.spec.Name
	// What was known before: a check that finds the same container as
	// healthy as it was is routine, not news for the log.
	prev := s.snap.Load()
	if err := m.mark(ctx, eng); err != nil {
		return fmt.Errorf("service %s: %w", name, err)
	}
	for _, d := range slices.Sorted(maps.Keys(s.spec.DependsOn)) {
		dep := m.svcs[d]
		if _, err := m.ensure(ctx, dep, false, f.progress, false); err != nil {
			return fmt.Errorf("service %s: dependency %s: %w", name, d, err)
		}
	}
	id := m.adoptRunning(ctx, eng, s, rebuild, prev)
	var replaced string
	if id == "" {
		// Building, creating, removing or restarting: one process of this
		// machine at a time, so that replicas starting together agree.
		unlock, err := m.lockService(ctx, name)
		if err != nil {
			return err
		}
		var imageID string
		imageID, replaced, err = m.ensureImage(ctx, eng, s, f, rebuild)
		if err == nil {
			id, err = m.createOrAdopt(ctx, eng, s, imageID, prev)
		}
		unlock()
		if err != nil {
			return err
		}
	}
	if replaced != "" {
		// The container runs the new image now: the one the rebuild
		// replaced would stay behind as a dangling image.
		if ok, err := eng.RemoveReplacedImage(ctx, replaced); err != nil {
			m.log.Info("the image a rebuild replaced was kept", "service", name, "image", replaced, "reason", err)
		} else if ok {
			m.log.Info("removed the image a rebuild replaced", "service", name, "image", replaced)
		}
	}
	return m.waitReady(ctx, eng, s, id, prev)
}

// adoptRunning returns the ID of the service's container when it runs,
// made from the current definition and the image its tag names now, and
// nothing has to be built (rebuild is false): the routine check of a
// running service, which takes no lock, so it never waits for another
// process's build. It returns "" when more is needed.
func (m *Manager) adoptRunning(ctx context.Context, eng Engine, s *svc, rebuild bool, prev *snapshot) string {
	if rebuild && s.spec.Build != nil {
		return ""
	}
	imageID, err := eng.ImageID(ctx, s.image)
	if err != nil || imageID == "" {
		return "" // the locked path says what is wrong, or makes the image
	}
	c, err := eng.Inspect(ctx, ContainerName(m.opts.Project, s.spec.Name))
	if err != nil || !owned(c.Labels, m.opts.Project) || c.Labels[LabelService] != s.spec.Name ||
		c.Labels[LabelConfig] != s.hash || c.ImageID != imageID || !c.Running() {
		return ""
	}
	m.adopted(ctx, s, c, prev)
	return c.ID
}

func (m *Manager) adopted(ctx context.Context, s *svc, c Container, prev *snapshot) {
	lvl := slog.LevelInfo
	if c.ID == prev.id {
		lvl = slog.LevelDebug
	}
	m.log.Log(ctx, lvl, "service adopted", "service", s.spec.Name, "container", c.Name, "owner", cmpOr(c.Labels[LabelOwner], "none"))
}

// createOrAdopt returns the ID of the service's container, running: the
// one there when it was made from the current definition and from image
// imageID, else a new one. The caller holds the service's lock.
func (m *Manager) createOrAdopt(ctx context.Context, eng Engine, s *svc, imageID string, prev *snapshot) (string, error) {
	name := s.spec.Name
	cname := ContainerName(m.opts.Project, name)
	var why error // what the last attempt ran into
	for attempt := 0; attempt < 4; attempt++ {
		c, err := eng.Inspect(ctx, cname)
		switch {
		case errors.Is(err, ErrNotFound):
			id, err := m.create(ctx, eng, s)
			if errors.Is(err, ErrConflict) {
				// Someone else created it meanwhile: adopt it.
				why = err
				if u := errors.Unwrap(err); u != nil {
					why = u // without create's "service NAME: "
				}
				continue
			}
			return id, err
		case err != nil:
			return "", fmt.Errorf("service %s: %w", name, err)
		case !owned(c.Labels, m.opts.Project) || c.Labels[LabelService] != name:
			return "", fmt.Errorf("service %s: %w: a container named %s exists without skillgate's labels for this project; rename or remove it yourself", name, ErrNotOwned, cname)
		case c.Labels[LabelConfig] != s.hash || c.ImageID != imageID:
			what := "definition"
			if c.Labels[LabelConfig] == s.hash {
				what = "image"
			}
			m.log.Info("service "+what+" changed; recreating its container", "service", name, "container", cname)
			if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
				return "", fmt.Errorf("service %s: %w", name, err)
			}
			why = fmt.Errorf("its container was made from another %s and was removed", what)
		case c.Running():
			m.adopted(ctx, s, c, prev)
			return c.ID, nil
		default:
			if err := eng.Start(ctx, c.ID); err != nil {
				// Its host port may have been taken meanwhile: start afresh.
				m.log.Warn("service container did not restart; recreating it", "service", name, "err", err)
				if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
					return "", fmt.Errorf("service %s: %w", name, err)
				}
				why = err
				continue
			}
			m.log.Info("service restarted", "service", name, "container", cname)
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("service %s: could not create or adopt container %s in 4 attempts (if it happens again, see what holds the name, docker ps -a --filter name=%s, and whether another skillgate with another definition of project %s uses this engine); the last one ran into: %w",
		name, cname, cname, m.opts.Project, why)
}

// ensureImage builds or pulls the image of s when needed and returns its
// ID, and the ID of the image a rebuild replaced under the same tag.
func (m *Manager) ensureImage(ctx context.Context, eng Engine, s *svc, f *flight, rebuild bool) (id, replaced string, err error) {
	ctx, cancel := context.WithTimeout(ctx, imageTimeout)
	defer cancel()
	name := s.spec.Name
	id, err = eng.ImageID(ctx, s.image)
	if err != nil {
		return "", "", fmt.Errorf("service %s: %w", name, err)
	}
	have, old := id != "", id
	progress := func(p Progress) {
		p.Service = name
		f.progress(p)
	}
	switch {
	case s.spec.Build != nil && (!have || rebuild):
		if fi, err := os.Stat(s.spec.Build.Context); err != nil || !fi.IsDir() {
			return "", "", fmt.Errorf("service %s: build context %s is not a folder (%s); fix build.context (relative to the config file) or create the folder",
				name, s.spec.Build.Context, statReason(err))
		}
		m.log.Info("building service image", "service", name, "image", s.image, "context", s.spec.Build.Context)
		b := &BuildConfig{
			Context: s.spec.Build.Context, Dockerfile: s.spec.Build.Dockerfile, Tag: s.image,
			// Tags are global, so the image names no project.
			Args: s.spec.Build.Args, Labels: map[string]string{LabelManaged: "true"},
		}
		if err := eng.Build(ctx, b, progress); err != nil {
			return "", "", fmt.Errorf("service %s: %w", name, err)
		}
	case !have:
		m.log.Info("pulling service image", "service", name, "image", s.image)
		if err := eng.Pull(ctx, s.image, progress); err != nil {
			// The engine's error names the pull and the image already.
			return "", "", fmt.Errorf("service %s: %w (%s)", name, err, pullHint(s.image, true))
		}
	default:
		return id, "", nil
	}
	if id, err = eng.ImageID(ctx, s.image); err == nil && id == "" {
		err = fmt.Errorf("image %s is missing after it was made", s.image)
	}
	if err != nil {
		return "", "", fmt.Errorf("service %s: %w", name, err)
	}
	if old != "" && old != id {
		replaced = old
	}
	return id, replaced, nil
}

// pullHint says what to do when image cannot be pulled; service says
// whether a build: context could make it.
func pullHint(image string, service bool) string {
	if service {
		return fmt.Sprintf("no registry reachable? give the service a build: context, or build the image yourself: docker build -t %s DIR", image)
	}
	return fmt.Sprintf("no registry reachable? build the image yourself: docker build -t %s DIR", image)
}

func statReason(err error) string {
	switch {
	case err == nil:
		return "it is a file"
	case errors.Is(err, fs.ErrNotExist):
		return "it does not exist"
	}
	return err.Error()
}

// create makes the container of s with free host ports, and starts it.
func (m *Manager) create(ctx context.Context, eng Engine, s *svc) (string, error) {
	sp := s.spec
	name := sp.Name
	cc := &ContainerConfig{
		Name: ContainerName(m.opts.Project, name), Image: s.image, Cmd: sp.Command, Env: s.env,
		Labels:  withLabels(m.opts.Project, LabelRole, RoleService, LabelService, name, LabelConfig, s.hash),
		Health:  sp.Healthcheck,
		Restart: sp.Restart, Memory: sp.Memory, PIDs: sp.PIDs,
		NanoCPUs: int64(math.Round(sp.CPUs * 1e9)),
		Network:  sp.Network,
		Init:     true,
	}
	if m.owner != "" {
		cc.Labels[LabelOwner] = m.owner
	}
	if h := cc.Health; h != nil && h.Interval == 0 && (len(h.Test) == 0 || h.Test[0] != "NONE") {
		hc := *h
		hc.Interval = DefaultHealthInterval
		cc.Health = &hc
	}
	if cc.Network == "" {
		if err := m.ensureNetwork(ctx, eng); err != nil {
			return "", fmt.Errorf("service %s: %w", name, err)
		}
		cc.Network = NetworkName(m.opts.Project)
		cc.Aliases = []string{name}
	}
	for _, v := range sp.Volumes {
		if v.Bind {
			cc.Mounts = append(cc.Mounts, Mount{Type: "bind", Source: v.Source, Target: v.Target, ReadOnly: v.ReadOnly})
			continue
		}
		vname := VolumeName(m.opts.Project, v.Source)
		if err := m.ensureVolume(ctx, eng, vname, name); err != nil {
			return "", fmt.Errorf("service %s: %w", name, err)
		}
		cc.Mounts = append(cc.Mounts, Mount{Type: "volume", Source: vname, Target: v.Target, ReadOnly: v.ReadOnly})
	}
	s.mu.Lock()
	prev := maps.Clone(s.lastPorts)
	s.mu.Unlock()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		cc.Ports = cc.Ports[:0]
		reused := false
		for _, p := range sp.Ports {
			if p.Host == 0 && attempt == 0 && prev[portKey(p)] != 0 {
				p.Host, reused = prev[portKey(p)], true
			}
			if p.Host == 0 {
				host, err := freePort(p.Protocol)
				if err != nil {
					return "", fmt.Errorf("service %s: pick a free port: %w", name, err)
				}
				p.Host = host
			}
			cc.Ports = append(cc.Ports, p)
		}
		id, err := eng.Create(ctx, cc)
		if err != nil {
			return "", fmt.Errorf("service %s: %w", name, err)
		}
		m.log.Info("service container created", "service", name, "container", cc.Name, "image", s.image)
		if err = eng.Start(ctx, id); err == nil {
			return id, nil
		}
		if ctx.Err() != nil {
			// m was closed or handed over meanwhile: the container stays
			// for the manager that takes over to adopt (removing it here
			// would race that manager's start), or for Close to remove.
			return "", fmt.Errorf("service %s: %w", name, ctx.Err())
		}
		lastErr = err
		_ = eng.Remove(context.WithoutCancel(ctx), id)
		if !portTaken(err) {
			break
		}
		// A port the config fixes cannot move: trying again would fail
		// the same way.
		if p, ok := fixedPortTaken(sp.Ports, err); ok {
			where := ""
			if p.Origin != "" {
				where = ", " + p.Origin
			}
			return "", fmt.Errorf("service %s: host port %d/%s is taken (ports: %q%s): another program or container listens on it; stop it, or write %q to let skillgate choose a free port (engine: %v)",
				name, p.Host, p.Protocol, p.String(), where, Port{Container: p.Container, Protocol: p.Protocol}.String(), err)
		}
		if reused {
			m.log.Info("the host port the service had before is taken; choosing another", "service", name)
		} else {
			m.log.Warn("a chosen host port was taken before the container bound it; choosing another", "service", name)
		}
	}
	return "", fmt.Errorf("service %s: start: %w", name, lastErr)
}

var portInMsgRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`:(\d+)\b`) })

func portTaken(err error) bool {
	s := err.Error()
	return strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use")
}

// fixedPortTaken returns the port with a fixed host port (from the config,
// not chosen) that the engine's error err is about, or that nothing can
// bind now.
func fixedPortTaken(ports []Port, err error) (Port, bool) {
	named := map[string]bool{}
	for _, m := range portInMsgRe().FindAllStringSubmatch(err.Error(), -1) {
		named[m[1]] = true
	}
	for _, p := range ports {
		if p.Host != 0 && named[strconv.Itoa(p.Host)] {
			return p, true
		}
	}
	for _, p := range ports {
		if p.Host != 0 && !canBind(p.Protocol, p.Host) {
			return p, true
		}
	}
	return Port{}, false
}

// canBind reports whether port of 127.0.0.1 is free now.
func canBind(proto string, port int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if proto == "udp" {
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort(proto string) (int, error) {
	if proto == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (m *Manager) ensureNetwork(ctx context.Context, eng Engine) error {
	m.netMu.Lock()
	defer m.netMu.Unlock()
	name := NetworkName(m.opts.Project)
	nets, err := eng.Networks(ctx, ownerLabels(m.opts.Project))
	if err != nil {
		return err
	}
	for _, n := range nets {
		if n.Name == name {
			return nil
		}
	}
	err = eng.CreateNetwork(ctx, name, withLabels(m.opts.Project, LabelRole, RoleNetwork))
	if errors.Is(err, ErrConflict) {
		return fmt.Errorf("%w: network %s exists without skillgate's labels; remove it or set docker.project", ErrNotOwned, name)
	}
	return err
}

func (m *Manager) ensureVolume(ctx context.Context, eng Engine, vname, service string) error {
	vols, err := eng.Volumes(ctx, ownerLabels(m.opts.Project))
	if err != nil {
		return err
	}
	for _, v := range vols {
		if v.Name == vname {
			return nil
		}
	}
	// Creating a volume that exists succeeds silently and keeps its
	// labels, so look for an unlabelled one first.
	all, err := eng.Volumes(ctx, nil)
	if err != nil {
		return err
	}
	for _, v := range all {
		if v.Name == vname {
			return fmt.Errorf("%w: volume %s exists without skillgate's labels; remove it or set docker.project", ErrNotOwned, vname)
		}
	}
	return eng.CreateVolume(ctx, vname, withLabels(m.opts.Project, LabelRole, RoleVolume, LabelService, service))
}

// waitReady polls the container until it is healthy (or running, without
// a health check), reports unhealthy, exits, or the start timeout passes.
func (m *Manager) waitReady(ctx context.Context, eng Engine, s *svc, id string, prev *snapshot) error {
	timeout := s.spec.StartTimeout
	if timeout <= 0 {
		timeout = m.opts.StartTimeout
	}
	name := s.spec.Name
	deadline := time.Now().Add(timeout)
	delay := 50 * time.Millisecond
	var run runWatch
	for {
		c, err := eng.Inspect(ctx, id)
		if err != nil {
			return fmt.Errorf("service %s: %w", name, err)
		}
		m.observe(s, c)
		switch {
		case c.State == "exited" || c.State == "dead":
			return fmt.Errorf("service %s: %w: its container exited with code %d before it was ready; last output:\n%s",
				name, ErrUnhealthy, c.ExitCode, m.tail(eng, id, 10))
		case c.Running() && (c.Health == "healthy" || c.Health == "" && run.settled(c, time.Now())):
			lvl := slog.LevelInfo
			if prev.ready() && prev.id == id {
				lvl = slog.LevelDebug // the routine check of a healthy service
			}
			m.log.Log(ctx, lvl, "service ready", "service", name, "health", cmpOr(c.Health, "no check"))
			return nil
		case c.Health == "unhealthy":
			return fmt.Errorf("service %s: %w: the health check failed (last check %s); see: %s",
				name, ErrUnhealthy, quoteOutput(c.HealthLog), m.hint("logs", name))
		}
		if time.Now().After(deadline) {
			last := "none ran yet"
			if c.HealthLog != "" {
				last = quoteOutput(c.HealthLog)
			}
			if c.Health == "" {
				// No health check: it kept restarting (a restart policy).
				return fmt.Errorf("service %s: %w: not running for %s in a row within %s (state %s, last exit code %d); last output:\n%s",
					name, ErrUnhealthy, settleTime, timeout, c.State, c.ExitCode, m.tail(eng, id, 10))
			}
			return fmt.Errorf("service %s: %w: not healthy after %s (state %s, health %s); last health check: %s; raise start_timeout or see: %s",
				name, ErrUnhealthy, timeout, c.State, cmpOr(c.Health, "none"), last, m.hint("logs", name))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("service %s: %w", name, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
}

// settleTime is how long a container without a health check must have
// run to be ready: one that exits at once (a wrong command, a missing
// setting) fails its start, with its exit code and output, instead of
// passing for ready until the next check.
const settleTime = time.Second

// runWatch follows one wait's view of a container without a health check.
type runWatch struct {
	started time.Time // the container's StartedAt last seen
	seen    time.Time // when this wait first saw it running since then
}

// settled reports whether running container c has run for settleTime: by
// the engine's clock, or by this wait's when the clocks disagree (a remote
// engine). An engine that does not say when it started c is taken at its
// word.
func (w *runWatch) settled(c Container, now time.Time) bool {
	if c.StartedAt.IsZero() {
		return true
	}
	if !c.StartedAt.Equal(w.started) {
		w.started, w.seen = c.StartedAt, now // it (re)started since the last look
	}
	return now.Sub(c.StartedAt) >= settleTime || now.Sub(w.seen) >= settleTime
}

func quoteOutput(s string) string {
	const max = 500
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// tail returns the last n lines a container wrote.
func (m *Manager) tail(eng Engine, id string, n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var b bytes.Buffer
	if err := eng.Logs(ctx, id, LogOptions{Tail: n}, &b); err != nil {
		return "(no output: " + err.Error() + ")"
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return strings.TrimRight(b.String(), "\n")
}

// HandOver passes m's containers to next, the manager of a reloaded
// config, and closes m. Starts in progress end, and their callers get
// ErrClosed (next adopts what they created when asked). A service next
// also declares (same project) keeps running; next recreates it on its
// next use when its definition changed, and gives it back the host ports
// it had. With the same owner (a gateway gives its managers one), what m
// created is next's to remove at its Close. A service next does not
// declare is stopped and removed as Close would.
func (m *Manager) HandOver(ctx context.Context, next *Manager) error {
	eng, ok := m.shut()
	if !ok {
		return ErrClosed
	}
	if eng == nil {
		return nil // it never reached the engine: nothing runs
	}
	same := next.opts.Project == m.opts.Project
	for _, n := range m.names {
		if ns := next.svcs[n]; ns != nil && same {
			s := m.svcs[n]
			s.mu.Lock()
			ports := maps.Clone(s.lastPorts)
			s.mu.Unlock()
			ns.mu.Lock()
			if ns.lastPorts == nil {
				ns.lastPorts = ports
			}
			ns.mu.Unlock()
		}
	}
	if m.owner == "" {
		return nil // detached: it removes nothing
	}
	others, err := m.release(ctx, eng, func(service string) bool { return !same || next.svcs[service] == nil })
	if !same || next.owner != m.owner {
		m.unmark(ctx, eng)
	}
	if !others && (!same || len(next.names) == 0) {
		m.removeNetwork(ctx, eng)
	}
	return err
}

// shut marks m closed, ends the starts in progress and drops what m knows
// of its services' states (Ensure's fast path trusts a recent healthy state
// without asking: it must not answer once m is closed). It returns m's
// engine, nil if m never connected, and false if m was already closed.
func (m *Manager) shut() (Engine, bool) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, false
	}
	m.closed = true
	eng := m.eng
	m.mu.Unlock()
	for _, s := range m.svcs {
		s.snap.Store(&snapshot{state: StateUnknown})
	}
	m.cancel()
	m.wg.Wait()
	return eng, true
}

// Close ends starts in progress, then stops and removes the service
// containers this manager's owner created and those whose owner is gone
// (services with Keep excepted), and the project's network when nothing
// uses it — unless another process still uses the project (its presence
// marker is there): then everything stays for the last one to stop (see
// owner.go). Containers without an owner (`skillgate services up`) and
// volumes always stay. It is idempotent; a Detach manager's removes
// nothing.
func (m *Manager) Close(ctx context.Context) error {
	eng, ok := m.shut()
	if !ok || eng == nil || m.owner == "" {
		return nil
	}
	others, err := m.release(ctx, eng, func(string) bool { return true })
	m.unmark(ctx, eng)
	if !others && err == nil {
		m.removeNetwork(ctx, eng)
	}
	return err
}

// mark puts m's presence marker on the engine: other processes of the
// project then leave the containers alone until m closes. It runs on every
// start or check of a service, so a marker removed meanwhile (by a
// `services down` of everything, or a volume prune) comes back; creating a
// volume that exists changes nothing.
func (m *Manager) mark(ctx context.Context, eng Engine) error {
	if m.owner == "" {
		return nil
	}
	err := eng.CreateVolume(ctx, PresenceName(m.opts.Project, m.owner),
		withLabels(m.opts.Project, LabelRole, RolePresence, LabelOwner, m.owner))
	if err != nil {
		return fmt.Errorf("record this process's use of project %s: %w", m.opts.Project, err)
	}
	return nil
}

// unmark removes m's presence marker.
func (m *Manager) unmark(ctx context.Context, eng Engine) {
	if m.owner == "" {
		return
	}
	if err := eng.RemoveVolume(ctx, PresenceName(m.opts.Project, m.owner)); err != nil && !errors.Is(err, ErrNotFound) {
		m.log.Warn("could not remove this process's presence marker", "volume", PresenceName(m.opts.Project, m.owner), "err", err)
	}
}

// owners returns the owners whose presence markers are on the engine for
// project, removing the markers of processes that are provably gone (a
// gateway killed with -9 leaves one behind).
func owners(ctx context.Context, eng Engine, project string) (map[string]bool, []string, error) {
	vols, err := eng.Volumes(ctx, withLabels(project, LabelRole, RolePresence))
	if err != nil {
		return nil, nil, err
	}
	live := map[string]bool{}
	var stale []string
	for _, v := range vols {
		o := v.Labels[LabelOwner]
		if !owned(v.Labels, project) || o == "" {
			continue
		}
		if processGone(o) {
			if err := eng.RemoveVolume(ctx, v.Name); err == nil || errors.Is(err, ErrNotFound) {
				stale = append(stale, v.Name)
			}
			continue
		}
		live[o] = true
	}
	return live, stale, nil
}

// release stops and removes the service containers of the services which
// selects that m may remove: those its owner created and, of declared
// services, those whose owner is gone; never Keep ones nor ones without
// an owner. When another live process uses the project it removes nothing
// and reports others.
func (m *Manager) release(ctx context.Context, eng Engine, which func(service string) bool) (others bool, err error) {
	live, _, err := owners(ctx, eng, m.opts.Project)
	if err != nil {
		return false, err
	}
	for o := range live {
		others = others || o != m.owner
	}
	list, err := eng.Containers(ctx, withLabels(m.opts.Project, LabelRole, RoleService))
	if err != nil {
		return others, err
	}
	var errs []error
	var left []string
	for _, c := range list {
		name, o := c.Labels[LabelService], c.Labels[LabelOwner]
		s := m.svcs[name]
		switch {
		case !owned(c.Labels, m.opts.Project) || !which(name) || o == "" || (s != nil && s.spec.Keep):
			continue
		case o == m.owner:
		case s != nil && !live[o]: // its creator is gone
		default:
			continue // another live process's
		}
		if others {
			left = append(left, name)
			continue
		}
		if err := m.stopRemove(ctx, eng, c, name); err != nil {
			errs = append(errs, err)
		}
	}
	if len(left) > 0 {
		slices.Sort(left)
		m.log.Info("leaving service containers running: another skillgate process uses this project, and the last one to stop removes them",
			"project", m.opts.Project, "services", strings.Join(left, ","))
	}
	return others, errors.Join(errs...)
}
