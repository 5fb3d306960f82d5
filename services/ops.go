package services

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"
)

// Status is what the manager knows of one service.
type Status struct {
	Service string `json:"service"`
	// State is one of the State* constants.
	State     string `json:"state"`
	Health    string `json:"health,omitempty"`
	Container string `json:"container"`
	ID        string `json:"id,omitempty"`
	Image     string `json:"image"`
	// Ports maps "5432/tcp" to the port on 127.0.0.1.
	Ports map[string]int `json:"ports,omitempty"`
	// Env are the wiring variables users get (host and ports, no secrets).
	Env       map[string]string `json:"env,omitempty"`
	Policy    string            `json:"policy"`
	Keep      bool              `json:"keep,omitempty"`
	LastError string            `json:"last_error,omitempty"`
	HealthLog string            `json:"health_log,omitempty"`
	Checked   time.Time         `json:"checked,omitzero"`
}

// Ready reports whether the service can be used now.
func (st Status) Ready() bool { return st.State == StateHealthy }

func (m *Manager) status(s *svc) Status {
	sn := s.snap.Load()
	st := Status{
		Service: s.spec.Name, State: sn.state, Health: sn.health, Image: s.image,
		Container: ContainerName(m.opts.Project, s.spec.Name), Ports: sn.ports, Env: maps.Clone(sn.env),
		Policy: "auto", Keep: s.spec.Keep, LastError: sn.lastErr, HealthLog: sn.hlog, Checked: sn.checked,
	}
	if len(sn.id) >= 12 {
		st.ID = sn.id[:12]
	}
	if s.spec.Manual {
		st.Policy = "manual"
	}
	return st
}

// Cached returns what the manager last saw of the named service, without
// asking the engine; ok is false for an unknown name.
func (m *Manager) Cached(name string) (Status, bool) {
	s := m.svcs[name]
	if s == nil {
		return Status{}, false
	}
	return m.status(s), true
}

// Status asks the engine about the named services (all when names is empty).
func (m *Manager) Status(ctx context.Context, names ...string) ([]Status, error) {
	svcs, err := m.lookup(names)
	if err != nil {
		return nil, err
	}
	eng, err := m.engine()
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(svcs))
	for _, s := range svcs {
		if err := m.refresh(ctx, eng, s); err != nil {
			return nil, err
		}
		out = append(out, m.status(s))
	}
	return out, nil
}

// refresh asks the engine about s and records what it says.
func (m *Manager) refresh(ctx context.Context, eng Engine, s *svc) error {
	c, err := eng.Inspect(ctx, ContainerName(m.opts.Project, s.spec.Name))
	switch {
	case errors.Is(err, ErrNotFound) || (err == nil && !owned(c.Labels, m.opts.Project)):
		old := s.snap.Load()
		s.snap.Store(&snapshot{state: StateStopped, checked: time.Now(), lastErr: old.lastErr})
	case err != nil:
		return err
	default:
		m.observe(s, c)
	}
	return nil
}

// Recent returns every service's status, asking the engine only about
// those last seen more than Options.HealthTTL ago (a service being started
// is shown as it stands). A service the engine could not be asked about is
// StateUnknown, with the reason in LastError: never the healthy state it
// had when last seen. For health endpoints and listings that are polled.
func (m *Manager) Recent(ctx context.Context) []Status {
	var engErr error
	eng, err := m.engine()
	if err != nil {
		engErr = err
	}
	out := make([]Status, 0, len(m.names))
	for _, n := range m.names {
		s := m.svcs[n]
		s.mu.Lock()
		starting := s.flight != nil
		s.mu.Unlock()
		if sn := s.snap.Load(); !starting && time.Since(sn.checked) >= m.opts.HealthTTL && !errors.Is(engErr, ErrClosed) {
			if engErr == nil {
				engErr = m.refresh(ctx, eng, s)
			}
			if engErr != nil && ctx.Err() == nil {
				// Unknown, not what it was: the fast path of Ensure must
				// not trust it either.
				s.snap.Store(&snapshot{state: StateUnknown, checked: time.Now(),
					lastErr: "cannot ask the engine: " + engErr.Error()})
			}
		}
		out = append(out, m.status(s))
	}
	return out
}

// Logs copies the named service's container output to w. With Follow it
// returns when the container stops or ctx is done.
func (m *Manager) Logs(ctx context.Context, name string, opts LogOptions, w io.Writer) error {
	svcs, err := m.lookup([]string{name})
	if err != nil {
		return err
	}
	eng, err := m.engine()
	if err != nil {
		return err
	}
	cname := ContainerName(m.opts.Project, svcs[0].spec.Name)
	c, err := eng.Inspect(ctx, cname)
	if errors.Is(err, ErrNotFound) || (err == nil && !owned(c.Labels, m.opts.Project)) {
		return fmt.Errorf("service %s has no container (%w); start it with: %s", name, ErrNotFound, m.hint("up", name))
	}
	if err != nil {
		return err
	}
	return eng.Logs(ctx, c.ID, opts, w)
}

// Down stops and removes the containers of the named services (all when
// names is empty), whoever started them, keeping their volumes. With every
// declared service down, the project's presence markers go (see owner.go),
// and its network too when no container uses it (Options.KeepNetwork
// excepted).
func (m *Manager) Down(ctx context.Context, names ...string) error {
	svcs, err := m.lookup(names)
	if err != nil {
		return err
	}
	eng, err := m.engine()
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range svcs {
		if err := m.down(ctx, eng, s); err != nil {
			if errors.Is(err, ErrNoEngine) {
				return err // the same for every other service
			}
			errs = append(errs, err)
		}
	}
	if len(svcs) == len(m.names) {
		// Nothing runs any more for anyone to keep: the markers go too, so a
		// killed process's marker (where it cannot be told gone) holds up
		// no later shutdown. A process still running puts its own back on
		// its next use of a service.
		m.removeMarkers(ctx, eng)
		if !m.opts.KeepNetwork {
			m.removeNetwork(ctx, eng)
		}
	}
	return errors.Join(errs...)
}

// removeMarkers removes the presence markers of the project.
func (m *Manager) removeMarkers(ctx context.Context, eng Engine) {
	vols, err := eng.Volumes(ctx, withLabels(m.opts.Project, LabelRole, RolePresence))
	if err != nil {
		return
	}
	for _, v := range vols {
		if owned(v.Labels, m.opts.Project) && v.Labels[LabelRole] == RolePresence {
			_ = eng.RemoveVolume(ctx, v.Name)
		}
	}
}

func (m *Manager) down(ctx context.Context, eng Engine, s *svc) error {
	list, err := eng.Containers(ctx, withLabels(m.opts.Project, LabelRole, RoleService, LabelService, s.spec.Name))
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range list {
		if err := m.stopRemove(ctx, eng, c, s.spec.Name); err != nil {
			errs = append(errs, err)
		}
	}
	s.snap.Store(&snapshot{state: StateStopped, checked: time.Now()})
	return errors.Join(errs...)
}

// stopRemove stops container c of service and removes it.
func (m *Manager) stopRemove(ctx context.Context, eng Engine, c Container, service string) error {
	var errs []error
	if c.Running() {
		if err := eng.Stop(ctx, c.ID, m.opts.StopTimeout); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
		return errors.Join(append(errs, err)...)
	}
	m.log.Info("service stopped", "service", service, "container", c.Name)
	return errors.Join(errs...)
}

func (m *Manager) removeNetwork(ctx context.Context, eng Engine) {
	nets, err := eng.Networks(ctx, ownerLabels(m.opts.Project))
	if err != nil {
		return
	}
	for _, n := range nets {
		if n.Name == NetworkName(m.opts.Project) && !n.InUse {
			if err := eng.RemoveNetwork(ctx, n.Name); err == nil {
				m.log.Info("network removed", "network", n.Name)
			}
		}
	}
}

// Remove is Down plus the removal of the named services' volumes: their
// data is gone.
func (m *Manager) Remove(ctx context.Context, names ...string) error {
	if err := m.Down(ctx, names...); err != nil {
		return err
	}
	svcs, _ := m.lookup(names)
	eng, err := m.engine()
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range svcs {
		vols, err := eng.Volumes(ctx, withLabels(m.opts.Project, LabelRole, RoleVolume, LabelService, s.spec.Name))
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, v := range vols {
			if err := eng.RemoveVolume(ctx, v.Name); err != nil && !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
				continue
			}
			m.log.Info("volume removed", "service", s.spec.Name, "volume", v.Name)
		}
	}
	return errors.Join(errs...)
}

// PruneOptions select what Prune removes.
type PruneOptions struct {
	// AllProjects prunes every skillgate project's objects, not only this one's.
	AllProjects bool
	// Images also removes images a service's build made that lost their
	// tag to a later build and no container uses, whatever the project
	// (images, like tags, belong to none).
	Images bool
	// Volumes also removes unused volumes of services still declared.
	Volumes bool
}

// PruneReport lists what Prune removed.
type PruneReport struct {
	Containers []string `json:"containers"`
	Volumes    []string `json:"volumes"`
	Networks   []string `json:"networks"`
	Images     []string `json:"images"`
}

// Prune removes skillgate's leftovers, and only objects carrying its labels:
// stopped containers, containers of services no longer declared, volumes no
// container uses (those of declared services only with opts.Volumes),
// networks no container uses; with opts.Images also images a service's
// build made that a later build left without a tag and no container uses
// (a rebuild removes the image it replaced once the container moved on, so
// these are leftovers: of interrupted runs, or of versions before it did).
func (m *Manager) Prune(ctx context.Context, opts PruneOptions) (PruneReport, error) {
	rep := PruneReport{Containers: []string{}, Volumes: []string{}, Networks: []string{}, Images: []string{}}
	eng, err := m.engine()
	if err != nil {
		return rep, err
	}
	filter := ownerLabels(m.opts.Project)
	if opts.AllProjects {
		filter = map[string]string{LabelManaged: "true"}
	}
	mine := func(labels map[string]string) bool {
		return labels[LabelManaged] == "true" && (opts.AllProjects || labels[LabelProject] == m.opts.Project)
	}
	var errs []error
	list, err := eng.Containers(ctx, filter)
	if err != nil {
		return rep, err
	}
	for _, c := range list {
		if !mine(c.Labels) {
			continue // the engine filtered; this is a second guard
		}
		ours := c.Labels[LabelProject] == m.opts.Project
		orphan := ours && c.Labels[LabelRole] == RoleService && m.svcs[c.Labels[LabelService]] == nil
		if c.Running() && !orphan {
			continue
		}
		if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		rep.Containers = append(rep.Containers, c.Name)
	}
	vols, err := eng.Volumes(ctx, filter)
	if err != nil {
		return rep, err
	}
	for _, v := range vols {
		if !mine(v.Labels) {
			continue
		}
		if v.Labels[LabelRole] == RolePresence && !processGone(v.Labels[LabelOwner]) {
			continue // a live process's presence marker
		}
		if v.Labels[LabelProject] == m.opts.Project && m.svcs[v.Labels[LabelService]] != nil && !opts.Volumes {
			continue
		}
		// A volume in use refuses removal; that is the check.
		if err := eng.RemoveVolume(ctx, v.Name); err != nil {
			if !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			continue
		}
		rep.Volumes = append(rep.Volumes, v.Name)
	}
	nets, err := eng.Networks(ctx, filter)
	if err != nil {
		return rep, err
	}
	for _, n := range nets {
		if !mine(n.Labels) || n.InUse {
			continue
		}
		if err := eng.RemoveNetwork(ctx, n.Name); err != nil {
			if !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			continue
		}
		rep.Networks = append(rep.Networks, n.Name)
	}
	var images []string
	if opts.Images {
		if images, err = eng.ReplacedImages(ctx, map[string]string{LabelManaged: "true"}); err != nil {
			return rep, err
		}
	}
	for _, id := range images {
		// An image a container still uses refuses removal.
		ok, err := eng.RemoveReplacedImage(ctx, id)
		if err != nil && !errors.Is(err, ErrConflict) {
			errs = append(errs, err)
		}
		if ok {
			rep.Images = append(rep.Images, id)
		}
	}
	for _, s := range m.svcs {
		s.snap.Store(&snapshot{state: StateUnknown})
	}
	return rep, errors.Join(errs...)
}

// RemoveServers removes the project's MCP server containers that are
// leftovers: those of m's owner (the gateway calls it when it stops, after
// its servers stopped), those whose owner's process is provably gone (a
// gateway killed before their --rm could act), and stopped ones. A running
// server container of another live process is never touched: each gateway
// runs its own (ServerContainer.Owner). The gateway calls it when it starts
// and when it stops.
func (m *Manager) RemoveServers(ctx context.Context) ([]string, error) {
	eng, err := m.engine()
	if err != nil {
		return nil, err
	}
	list, err := eng.Containers(ctx, withLabels(m.opts.Project, LabelRole, RoleServer))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, c := range list {
		if !owned(c.Labels, m.opts.Project) || c.Labels[LabelRole] != RoleServer {
			continue
		}
		o := c.Labels[LabelOwner]
		// "created" is left alone too: a docker run between create and start.
		ended := c.State == "exited" || c.State == "dead"
		if !ended && (o == "" || (o != m.owner && !processGone(o))) {
			continue
		}
		// A conflict is a removal already in progress: --rm got there first.
		if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, c.Name)
	}
	return removed, errors.Join(errs...)
}

// PrepareServer makes ready what the docker command of an image server
// (sc) needs: its image, pulled when missing (with what to do when it
// cannot be), and for a server on the project's network, that network.
// Without it docker run pulls by itself and fails with the engine's bare
// text and no next step.
func (m *Manager) PrepareServer(ctx context.Context, sc *ServerContainer) error {
	eng, err := m.engine()
	if err != nil {
		return fmt.Errorf("server %s: %w", sc.Server, err)
	}
	id, err := eng.ImageID(ctx, sc.Image)
	if err != nil {
		return fmt.Errorf("server %s: %w", sc.Server, err)
	}
	if id == "" {
		m.log.Info("pulling server image", "server", sc.Server, "image", sc.Image)
		if err := eng.Pull(ctx, sc.Image, nil); err != nil {
			return fmt.Errorf("server %s: image %s is not on this engine and %w (%s)", sc.Server, sc.Image, err, pullHint(sc.Image, false))
		}
	}
	if sc.ProjectNetwork {
		if err := m.ensureNetwork(ctx, eng); err != nil {
			return fmt.Errorf("server %s: %w", sc.Server, err)
		}
	}
	return nil
}
