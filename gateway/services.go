package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/script"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/services"
)

// Services: Docker containers that servers, tools, pipelines and skills
// require. The gateway holds one services.Manager per config; it touches
// the engine only when the config declares services or image servers, so a
// machine without Docker serves everything else as before.

// ServiceOptions tune NewServiceManager.
type ServiceOptions struct {
	// Logger receives the manager's log; nil discards it.
	Logger *slog.Logger
	// Progress, when set, receives the pulls and builds of on-demand starts.
	Progress func(services.Progress)
	// Owner is the owner id of the process (services.NewOwner); empty means
	// a new one. See services.Options.Owner.
	Owner string
	// Detach makes the containers the manager starts outlive the process,
	// as `skillgate services up` wants (services.Options.Detach).
	Detach bool
}

// NewServiceManager returns the manager of cfg's services. The CLI uses it
// without a running gateway; both see the same containers (by label).
func NewServiceManager(cfg *config.Config, opts ServiceOptions) (*services.Manager, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return services.New(cfg.ServiceSpecs(), services.Options{
		Project:      cfg.DockerProject(),
		Logger:       log.With("component", "services"),
		AllowBinds:   cfg.AllowedBinds(),
		HealthTTL:    time.Duration(cfg.Docker.HealthTTL),
		StartTimeout: time.Duration(cfg.Docker.StartTimeout),
		CLI:          cliHint(cfg),
		Progress:     opts.Progress,
		KeepNetwork:  imageServersRequire(cfg),
		Owner:        opts.Owner,
		Detach:       opts.Detach,
	})
}

// imageServersRequire reports whether an image server of cfg requires
// services: it joins the project's network, and its restarts (the mcp
// executor runs its docker command again) need the network to be there
// even after `services down`.
func imageServersRequire(cfg *config.Config) bool {
	for _, s := range cfg.Servers {
		if s != nil && s.Image != "" && !s.Disabled && len(s.Requires) > 0 {
			return true
		}
	}
	return false
}

// cliHint is the command line that runs skillgate on cfg, for the hints
// of errors ("... services up kv").
func cliHint(cfg *config.Config) string {
	if cfg.Source == "" || strings.HasPrefix(cfg.Source, "<") {
		return "skillgate"
	}
	return "skillgate -c " + cfg.Source
}

// usesDocker reports whether cfg needs the engine at all.
func usesDocker(cfg *config.Config) bool {
	if len(cfg.Services) > 0 {
		return true
	}
	for _, s := range cfg.Servers {
		if s != nil && s.Image != "" && !s.Disabled {
			return true
		}
	}
	return false
}

// newServices builds the gateway's manager; a problem is kept for the
// first caller, never fatal to the gateway.
func (g *Gateway) newServices(cfg *config.Config) {
	g.svc.Store(newServiceState(cfg, g.log, services.NewOwner()))
}

// serviceState is the service manager of the config being served, or why
// there is none.
type serviceState struct {
	m   *services.Manager // nil when err says why
	err error
	// owner is the gateway's owner id, the same for the managers of all its
	// configs: what one created, the one of the reloaded config removes.
	owner string
}

func newServiceState(cfg *config.Config, log *slog.Logger, owner string) *serviceState {
	m, err := NewServiceManager(cfg, ServiceOptions{Logger: log, Owner: owner})
	if err != nil {
		log.Error("services unavailable", "err", err)
		return &serviceState{err: fmt.Errorf("services: %w", err), owner: owner}
	}
	return &serviceState{m: m, owner: owner}
}

// svcs is the current service manager, nil when there is none.
func (g *Gateway) svcs() *services.Manager {
	if st := g.svc.Load(); st != nil {
		return st.m
	}
	return nil
}

// svcErr says why there is no service manager.
func (g *Gateway) svcErr() error {
	if st := g.svc.Load(); st != nil {
		return st.err
	}
	return nil
}

// Services returns the gateway's service manager, or nil when the config's
// services could not be set up (see EnsureServices' error).
func (g *Gateway) Services() *services.Manager { return g.svcs() }

// reloadServices applies a reloaded config's services: when they (or the
// docker settings) changed, a new manager takes over the running
// containers (services.Manager.HandOver): services still declared keep
// running and are recreated on their next use if their definition changed,
// removed ones stop. Servers that required a service whose address changed
// restart on their next call (rewire).
func (g *Gateway) reloadServices(ctx context.Context, old, cfg *config.Config) {
	if sameServices(old, cfg) {
		return
	}
	owner := services.NewOwner()
	if cur := g.svc.Load(); cur != nil {
		owner = cur.owner
	}
	next := newServiceState(cfg, g.log, owner)
	prev := g.svc.Swap(next)
	if prev == nil || prev.m == nil {
		return
	}
	if next.m == nil {
		// Keep nothing running that no manager would stop.
		if err := prev.m.Close(ctx); err != nil {
			g.log.Warn("stopping services", "err", err)
		}
		return
	}
	if err := prev.m.HandOver(ctx, next.m); err != nil {
		g.log.Warn("handing services over to the reloaded config", "err", err)
	}
	g.log.Info("services reloaded", "services", len(cfg.Services))
}

// sameServices reports whether a and b declare the same services and
// docker settings; where in the file they are does not count.
func sameServices(a, b *config.Config) bool {
	if !reflect.DeepEqual(a.Docker, b.Docker) || len(a.Services) != len(b.Services) {
		return false
	}
	for n, s := range a.Services {
		o := b.Services[n]
		if s == nil || o == nil {
			if s != o {
				return false
			}
			continue
		}
		x, y := *s, *o
		x.Pos, y.Pos = config.Pos{}, config.Pos{}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// EnsureServices makes sure the named services run and are healthy,
// starting them on demand per their policy, and returns the variables that
// reach them (NAME_HOST, NAME_PORT, NAME_PORT_<port>). A service seen
// healthy within docker.health_ttl costs no I/O, so tools, pipelines and
// skills may call it on every use.
func (g *Gateway) EnsureServices(ctx context.Context, names ...string) (map[string]string, error) {
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	for {
		st := g.svc.Load()
		if st == nil || st.m == nil {
			if st != nil && st.err != nil {
				return nil, st.err
			}
			return nil, fmt.Errorf("%w %q: the config declares no services", services.ErrUnknownService, names[0])
		}
		env, err := st.m.Ensure(ctx, names...)
		if g.handedOver(st, err) {
			continue
		}
		return env, err
	}
}

// handedOver reports whether err is st's manager saying it was closed
// while a config reload put another manager in its place (the swap comes
// before the hand-over, see reloadServices): a start the old manager ended
// is then asked of the new one, so a call waiting on a service does not
// fail because the config changed meanwhile.
func (g *Gateway) handedOver(st *serviceState, err error) bool {
	return errors.Is(err, services.ErrClosed) && g.svc.Load() != st
}

// startServices removes the server containers left over by a gateway of
// the project that is gone (killed before their --rm could act), and
// stopped ones; another running gateway's are left alone.
func (g *Gateway) startServices(ctx context.Context, cfg *config.Config) {
	m := g.svcs()
	if m == nil || !usesDocker(cfg) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	removed, err := m.RemoveServers(ctx)
	switch {
	case errors.Is(err, services.ErrNoEngine):
		g.log.Warn("Docker engine not reachable; services and image servers will fail until it is", "err", err)
	case err != nil:
		g.log.Warn("could not remove leftover server containers", "err", err)
	case len(removed) > 0:
		g.log.Info("removed server containers a previous run left", "containers", removed)
	}
}

// closeServices runs after the sources stopped: it removes what is left of
// the gateway's server containers, and stops the services it created
// (except keep: true ones) unless another process still uses the project
// (services.Manager.Close).
func (g *Gateway) closeServices() {
	m := g.svcs()
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g.mu.Lock()
	cfg := g.cfg
	g.mu.Unlock()
	if usesDocker(cfg) {
		if _, err := m.RemoveServers(ctx); err != nil && !errors.Is(err, services.ErrNoEngine) {
			g.log.Warn("could not remove server containers", "err", err)
		}
	}
	if err := m.Close(ctx); err != nil {
		g.log.Warn("stopping services", "err", err)
	}
}

// dockerEnvKeys reach the docker CLI of an image server, so it talks to the
// same engine as the gateway.
var dockerEnvKeys = []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_API_VERSION"}

// prepareSpec returns the spec s loads with: an image server becomes its
// docker command line, and the variables of the services it requires are
// added to its environment (the server's own env wins); wiring is those
// variables. A command server reaches the services on the host's loopback,
// through their published ports; an image server joins the project's
// network and reaches them by name (wiring is nil: it does not change when
// a service comes back on other host ports).
func (g *Gateway) prepareSpec(ctx context.Context, s *source) (spec json.RawMessage, wiring map[string]string, err error) {
	sv := s.server
	if sv == nil || (sv.Image == "" && len(s.requires) == 0) {
		return s.spec, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(s.spec, &m); err != nil {
		return nil, nil, err
	}
	env := map[string]string{}
	if len(s.requires) > 0 {
		if wiring, err = g.EnsureServices(ctx, s.requires...); err != nil {
			return nil, nil, fmt.Errorf("server %s requires %s: %w", s.id, strings.Join(s.requires, ", "), err)
		}
		if sv.Image != "" {
			m := g.svcs()
			if m == nil {
				return nil, nil, fmt.Errorf("server %s: %w", s.id, g.svcErr())
			}
			if wiring, err = m.NetworkWiring(s.requires...); err != nil {
				return nil, nil, fmt.Errorf("server %s: %w", s.id, err)
			}
			maps.Copy(env, wiring)
			wiring = nil
		}
		maps.Copy(env, wiring)
	}
	maps.Copy(env, sv.Env)
	if sv.Image != "" {
		g.mu.Lock()
		sc := g.cfg.ServerContainer(s.id)
		g.mu.Unlock()
		if sc == nil {
			return nil, nil, fmt.Errorf("server %s: no image in the current config", s.id)
		}
		// The wiring variables go into the container too.
		sc.EnvNames = slices.Sorted(maps.Keys(env))
		if st := g.svc.Load(); st != nil {
			sc.Owner = st.owner
		}
		if err := sc.Check(); err != nil {
			return nil, nil, fmt.Errorf("server %s: %w", s.id, err)
		}
		if m := g.svcs(); m != nil {
			// docker run would pull a missing image itself and fail with
			// the engine's bare text; this says what to do instead.
			if err := m.PrepareServer(ctx, sc); err != nil {
				return nil, nil, err
			}
		}
		for _, k := range dockerEnvKeys {
			if v, ok := os.LookupEnv(k); ok {
				if _, set := env[k]; !set {
					env[k] = v
				}
			}
		}
		cmd, args := sc.Command()
		m["command"], m["args"], m["cwd"] = cmd, args, ""
	}
	m["env"] = env
	spec, err = json.Marshal(m)
	return spec, wiring, err
}

// checkRequires is the per-call dependency check of a source that requires
// services: cheap while they are healthy, a start (or a clear error) when not.
//
// It returns the services' variables (NAME_HOST, NAME_PORT, ...).
func (g *Gateway) checkRequires(ctx context.Context, s *source) (map[string]string, error) {
	if len(s.requires) == 0 {
		return nil, nil
	}
	wiring, err := g.EnsureServices(ctx, s.requires...)
	if err != nil {
		return nil, fmt.Errorf("%s requires %s: %w", s.id, strings.Join(s.requires, ", "), err)
	}
	return wiring, nil
}

// rewire restarts a server that was started with other variables of the
// services it requires than wiring, the ones a call just got: a service
// came back on another host port (its old one was taken when it was
// recreated), and the server still points at the old one. Calls wait for
// the restart; its tools are published again as they are (unchanged tools
// send no list_changed).
func (g *Gateway) rewire(ctx context.Context, s *source, wiring map[string]string) error {
	if s.server == nil || len(s.requires) == 0 || s.server.Command == "" {
		return nil // a remote server, a tool, or an image server (it uses the services' names)
	}
	stale := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.loaded && !maps.Equal(s.wired, wiring)
	}
	if !stale() {
		return nil
	}
	s.rewiring.Lock()
	defer s.rewiring.Unlock()
	if !stale() {
		return nil // another call restarted it meanwhile
	}
	g.log.Warn("restarting a server: the services it requires moved", "source", s.id, "services", strings.Join(s.requires, ","))
	ex := s.executor()
	s.mu.Lock()
	s.loaded = false
	s.mu.Unlock()
	if err := ex.Unload(ctx, s.id); err != nil && !errors.Is(err, sdk.ErrUnknownSource) {
		return fmt.Errorf("server %s: restart for the new service addresses: %w", s.id, err)
	}
	if err := g.load(ctx, s); err != nil {
		g.retry(s)
		return fmt.Errorf("server %s: restart for the new service addresses: %w", s.id, err)
	}
	return nil
}

// withWiring puts the services' variables into a tools/call's params as
// _meta[script.MetaEnv], where the script executor reads them.
func withWiring(params json.RawMessage, wiring map[string]string) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	var meta map[string]any
	_ = json.Unmarshal(p["_meta"], &meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[script.MetaEnv] = wiring
	p["_meta"], _ = json.Marshal(meta)
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}

// ServiceState is a required service's state in a source's status.
type ServiceState struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	LastError string `json:"last_error,omitempty"`
	// RequiredBy names the pipelines that require it, for the pipelines'
	// source (one source serving many pipelines).
	RequiredBy []string `json:"required_by,omitempty"`
}

// serviceStates returns the cached states of names (no I/O).
func (g *Gateway) serviceStates(names []string) []ServiceState {
	if len(names) == 0 {
		return nil
	}
	out := make([]ServiceState, 0, len(names))
	for _, n := range names {
		st := ServiceState{Name: n, State: services.StateUnknown}
		if m := g.svcs(); m != nil {
			if c, ok := m.Cached(n); ok {
				st.State, st.LastError = c.State, c.LastError
			}
		}
		out = append(out, st)
	}
	return out
}

// ServicesStatus returns every service's state for /readyz and
// services__ls: as last seen, asking the engine again about those not seen
// within docker.health_ttl (a container removed behind the gateway's back
// is not reported healthy), within a few seconds at most.
func (g *Gateway) ServicesStatus(ctx context.Context) []services.Status {
	m := g.svcs()
	if m == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return m.Recent(ctx)
}

// sourceServices returns the states of the services source s requires:
// its own requires, or for the pipelines' source those of the pipelines it
// serves, each naming the pipelines that need it.
func (g *Gateway) sourceServices(s *source) []ServiceState {
	if s.id != pipelinesSourceID || g.pipes == nil {
		return g.serviceStates(s.requires)
	}
	list, _ := g.pipes.snapshot()
	by := map[string][]string{}
	for _, p := range list {
		for _, r := range p.Requires {
			if !slices.Contains(by[r], p.Name) {
				by[r] = append(by[r], p.Name)
			}
		}
	}
	out := g.serviceStates(slices.Sorted(maps.Keys(by)))
	for i := range out {
		out[i].RequiredBy = slices.Sorted(slices.Values(by[out[i].Name]))
	}
	return out
}
