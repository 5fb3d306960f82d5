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
		c, err := eng.Inspect(ctx, ContainerName(m.opts.Project, s.spec.Name))
		switch {
		case errors.Is(err, ErrNotFound) || (err == nil && !owned(c.Labels, m.opts.Project)):
			old := s.snap.Load()
			s.snap.Store(&snapshot{state: StateStopped, checked: time.Now(), lastErr: old.lastErr})
		case err != nil:
			return nil, err
		default:
			m.observe(s, c)
		}
		out = append(out, m.status(s))
	}
	return out, nil
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
		return fmt.Errorf("service %s has no container (%w); start it with: skillgate services up %s", name, ErrNotFound, name)
	}
	if err != nil {
		return err
	}
	return eng.Logs(ctx, c.ID, opts, w)
}

// Down stops and removes the containers of the named services (all when
// names is empty), whoever started them, keeping their volumes. With all
// services down, the project's network goes too (Options.KeepNetwork
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
			errs = append(errs, err)
		}
	}
	if len(names) == 0 && !m.opts.KeepNetwork {
		m.removeNetwork(ctx, eng)
	}
	return errors.Join(errs...)
}

func (m *Manager) down(ctx context.Context, eng Engine, s *svc) error {
	list, err := eng.Containers(ctx, withLabels(m.opts.Project, LabelRole, RoleService, LabelService, s.spec.Name))
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range list {
		if c.Running() {
			if err := eng.Stop(ctx, c.ID, m.opts.StopTimeout); err != nil && !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
		}
		if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		m.log.Info("service stopped", "service", s.spec.Name, "container", c.Name)
	}
	s.mu.Lock()
	s.touched = false
	s.mu.Unlock()
	s.snap.Store(&snapshot{state: StateStopped, checked: time.Now()})
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
			return err
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
	var rep PruneReport
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

// RemoveServers removes every MCP server container of the project, running
// or not: leftovers of a gateway that was killed before its servers' --rm
// could act. The gateway calls it when it starts and when it stops.
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
		// A conflict is a removal already in progress: --rm got there first.
		if err := eng.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, c.Name)
	}
	return removed, errors.Join(errs...)
}
