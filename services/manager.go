package services

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
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
	// UpHint is the command that starts a service by hand, such as
	// "skillgate -c skillgate.yaml services up"; the service name is
	// appended. It is shown when a manual service is not running.
	UpHint string
	// Progress, when set, receives the progress of pulls and builds started
	// on demand by Ensure.
	Progress func(Progress)
	// KeepNetwork keeps the project's network when every service is
	// downed (Down with no names): containers that are not services, such
	// as image servers that require them, join it too and must find it
	// when they restart. Close and HandOver still remove it when nothing
	// of the project is left on it.
	KeepNetwork bool
}

// Manager runs a project's services: it starts them on demand, once, waits
// until they are healthy, hands out the variables that reach them, and stops
// them on Close. All methods are safe for concurrent use.
type Manager struct {
	opts  Options
	eng   Engine
	log   *slog.Logger
	names []string // declared services, sorted
	svcs  map[string]*svc

	runCtx context.Context // ends at Close; bounds every start
	cancel context.CancelFunc
	wg     sync.WaitGroup

	netMu sync.Mutex // orders network creation

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

	mu      sync.Mutex
	flight  *flight
	touched bool // started or adopted by this manager: stopped at Close
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
	m := &Manager{opts: opts, eng: opts.Engine, log: opts.Logger, svcs: map[string]*svc{}}
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
	c, err := eng.Inspect(ctx, ContainerName(m.opts.Project, s.spec.Name))
	if err == nil && owned(c.Labels, m.opts.Project) {
		m.observe(s, c)
		if sn := s.snap.Load(); sn.ready() {
			return maps.Clone(sn.env), nil
		}
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("service %s: %w", s.spec.Name, err)
	}
	hint := m.opts.UpHint
	if hint == "" {
		hint = "skillgate services up"
	}
	state := s.snap.Load().state
	return nil, fmt.Errorf("service %s: %w (state %s) and its policy is manual; start it with: %s %s",
		s.spec.Name, ErrNotRunning, state, hint, s.spec.Name)
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
	for _, d := range slices.Sorted(maps.Keys(s.spec.DependsOn)) {
		dep := m.svcs[d]
		if _, err := m.ensure(ctx, dep, false, f.progress, false); err != nil {
			return fmt.Errorf("service %s: dependency %s: %w", name, d, err)
		}
	}
	imageID, replaced, err := m.ensureImage(ctx, eng, s, f, rebuild)
	if err != nil {
		return err
	}
	cname := ContainerName(m.opts.Project, name)
	var id string
	for attempt := 0; id == "" && attempt < 4; attempt++ {
		c, err := eng.Inspect(ctx, cname)
		switch {
		case errors.Is(err, ErrNotFound):
			id, err = m.create(ctx, eng, s)
			if errors.Is(err, ErrConflict) {
				continue // someone else created it meanwhile: adopt it
			}
			if err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("service %s: %w", name, err)
		case !owned(c.Labels, m.opts.Project) || c.Labels[LabelService] != name:
			return fmt.Errorf("service %s: %w: a container named %s exists without skillgate's labels for this project; rename or remove it yourself", name, ErrNotOwned, cname)
		case c.Labels[LabelConfig] != s.hash || c.ImageID != imageID:
			m.log.Info("service definition or image changed; recreating its container", "service", name, "container", cname)
			if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("service %s: %w", name, err)
			}
		case c.Running():
			m.log.Info("service adopted", "service", name, "container", cname)
			id = c.ID
		default:
			if err := eng.Start(ctx, c.ID); err != nil {
				// Its host port may have been taken meanwhile: start afresh.
				m.log.Warn("service container did not restart; recreating it", "service", name, "err", err)
				if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
					return fmt.Errorf("service %s: %w", name, err)
				}
				continue
			}
			m.log.Info("service restarted", "service", name, "container", cname)
			id = c.ID
		}
	}
	if id == "" {
		return fmt.Errorf("service %s: could not create or adopt container %s", name, cname)
	}
	s.mu.Lock()
	s.touched = true
	s.mu.Unlock()
	if replaced != "" {
		// The container runs the new image now: the one the rebuild
		// replaced would stay behind as a dangling image.
		if ok, err := eng.RemoveReplacedImage(ctx, replaced); err != nil {
			m.log.Info("the image a rebuild replaced was kept", "service", name, "image", replaced, "reason", err)
		} else if ok {
			m.log.Info("removed the image a rebuild replaced", "service", name, "image", replaced)
		}
	}
	return m.waitReady(ctx, eng, s, id)
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
			return "", "", fmt.Errorf("service %s: pull %s: %w (no registry reachable? build it locally with build: or docker build -t %s)", name, s.image, err, s.image)
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
		for _, p := range sp.Ports {
			if p.Host == 0 && attempt == 0 && prev[portKey(p)] != 0 {
				p.Host = prev[portKey(p)]
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
		lastErr = err
		_ = eng.Remove(context.WithoutCancel(ctx), id)
		if !portTaken(err) {
			break
		}
		m.log.Warn("host port taken between choosing and binding it; trying others", "service", name)
	}
	return "", fmt.Errorf("service %s: start: %w", name, lastErr)
}

func portTaken(err error) bool {
	s := err.Error()
	return strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use")
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
func (m *Manager) waitReady(ctx context.Context, eng Engine, s *svc, id string) error {
	timeout := s.spec.StartTimeout
	if timeout <= 0 {
		timeout = m.opts.StartTimeout
	}
	name := s.spec.Name
	deadline := time.Now().Add(timeout)
	delay := 50 * time.Millisecond
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
		case c.Running() && (c.Health == "" || c.Health == "healthy"):
			m.log.Info("service ready", "service", name, "health", cmpOr(c.Health, "no check"))
			return nil
		case c.Health == "unhealthy":
			return fmt.Errorf("service %s: %w: the health check failed (last check %s); see: skillgate services logs %s",
				name, ErrUnhealthy, quoteOutput(c.HealthLog), name)
		}
		if time.Now().After(deadline) {
			last := "none ran yet"
			if c.HealthLog != "" {
				last = quoteOutput(c.HealthLog)
			}
			return fmt.Errorf("service %s: %w: not healthy after %s (state %s, health %s); last health check: %s; raise start_timeout or see: skillgate services logs %s",
				name, ErrUnhealthy, timeout, c.State, cmpOr(c.Health, "none"), last, name)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("service %s: %w", name, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
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
// also declares (same project) keeps running, owned by next from then on:
// next stops it at Close, recreates it on its next use when its definition
// changed, and gives it back the host ports it had. A service next does
// not declare is stopped and removed like Close does, Keep excepted.
func (m *Manager) HandOver(ctx context.Context, next *Manager) error {
	eng, ok := m.shut()
	if !ok {
		return ErrClosed
	}
	if eng == nil {
		return nil // it never reached the engine: nothing runs
	}
	var errs []error
	left := 0
	for _, n := range m.names {
		s := m.svcs[n]
		s.mu.Lock()
		touched, ports := s.touched, maps.Clone(s.lastPorts)
		s.mu.Unlock()
		if ns := next.svcs[n]; ns != nil && next.opts.Project == m.opts.Project {
			ns.mu.Lock()
			ns.touched = ns.touched || touched
			if ns.lastPorts == nil {
				ns.lastPorts = ports
			}
			ns.mu.Unlock()
			left++
			continue
		}
		if !touched || s.spec.Keep {
			if touched {
				left++ // kept: it stays on the network
			}
			continue
		}
		m.log.Info("service no longer declared; stopping it", "service", n)
		if err := m.down(ctx, eng, s); err != nil {
			errs = append(errs, err)
		}
	}
	if left == 0 {
		m.removeNetwork(ctx, eng)
	}
	return errors.Join(errs...)
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

// Close ends starts in progress, then stops and removes the containers this
// manager started or adopted, except those of services with Keep. It is
// idempotent.
func (m *Manager) Close(ctx context.Context) error {
	eng, ok := m.shut()
	if !ok || eng == nil {
		return nil
	}
	var errs []error
	kept := false
	for _, n := range m.names {
		s := m.svcs[n]
		s.mu.Lock()
		touched := s.touched
		s.mu.Unlock()
		if s.spec.Keep {
			kept = kept || touched
			continue
		}
		if !touched {
			continue
		}
		if err := m.down(ctx, eng, s); err != nil {
			errs = append(errs, err)
		}
	}
	if !kept {
		m.removeNetwork(ctx, eng)
	}
	return errors.Join(errs...)
}
