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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/internal/names"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// source is one loaded spec: a server of the config or a plugin's default
// source.
type source struct {
	id        string
	execName  string
	inprocess bool
	namespace string
	priority  int
	order     int
	kind      string
	spec      json.RawMessage
	server    *config.Server // nil for plugin and internal sources
	plugin    *pluginFile    // the file of a third-party executor's source; nil for others
	timeout   time.Duration
	internal  bool     // the gateway's own (admin groups): not in Status
	requires  []string // services checked before every call (services.go)
	group     string   // catalog.Source.Group

	skill string // catalog.Source.Skill: the skill whose folder it comes from

	// exec is the executor that serves it, nil until the first load;
	// calls read it without a lock (executor).
	exec   atomic.Pointer[execRef]
	cancel context.CancelFunc // ends the retry loop

	mu     sync.Mutex
	st     SourceStatus
	loaded bool
	// served says that the front end served its definitions once: until
	// then Status says it is starting, not ready. pending says that those
	// of its first load wait for the end of a reload (Gateway.hold).
	served, pending bool
	// st.Restarts is retries (loads the gateway tried again after a failed
	// one) plus execRestarts (the executor's count for its load).
	retries, execRestarts int
	// gaveUp says that its last failed load failed because the plugin
	// host gave up on its file (host.ErrGaveUp): the retries after it that
	// fail so are refused without running the file, and are not counted.
	gaveUp bool
	// logged is the executor's count given to its last logged state change
	// of the load, loggedOwn what the executor said (restartlog.go).
	logged, loggedOwn int
	// wired holds the services' variables the running server was started
	// with (nil when it requires none); rewiring serializes restarts for
	// new ones (services.go).
	wired    map[string]string
	rewiring sync.Mutex
	// failLogged is the last failure logged at Error for s, and
	// failLoggedAt when (failureLevel).
	failLogged   string
	failLoggedAt time.Time
}

// failureRelog is how long a failure that repeats is left at Debug before
// it is logged at Error again.
const failureRelog = 10 * time.Minute

// failureLevel is the level to log a failure of s with err at: Error when
// err says something else than the failure last logged at Error, or that
// one is failureRelog old; Debug otherwise, so that a server that keeps
// failing the same way does not fill the log at every retry.
func (s *source) failureLevel(err error) slog.Level {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg, now := err.Error(), time.Now()
	if msg == s.failLogged && now.Sub(s.failLoggedAt) < failureRelog {
		return slog.LevelDebug
	}
	s.failLogged, s.failLoggedAt = msg, now
	return slog.LevelError
}

// logFailure logs that s failed with err (msg and args), at failureLevel;
// at Debug when ctx, the load's, was cancelled: the gateway or the source
// is stopping (a rolling restart's SIGTERM during the start), which is no
// failure to report.
func (g *Gateway) logFailure(ctx context.Context, s *source, err error, msg string, args ...any) {
	if errors.Is(ctx.Err(), context.Canceled) {
		g.log.Debug(msg+": cancelled by the stop", append(args, "err", err)...)
		return
	}
	g.log.Log(context.Background(), s.failureLevel(err), msg, append(args, "err", err)...)
}

func (s *source) status() SourceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if st.State == "ready" && !s.served {
		// Its executor says so, but clients do not see its tools yet: its
		// load has not returned, or a reload holds the definitions.
		st.State = "starting"
	}
	return st
}

func (s *source) setState(state, lastErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.State != state {
		s.st.Since = time.Now()
	}
	s.st.State = state
	if lastErr != "" || state == "ready" {
		s.st.LastError = lastErr
	}
}

// serverSpec is the mcp executor's spec for a config server entry. The
// server's timeout is not in it: the gateway bounds each call itself, and
// progress from the upstream extends it (router.dispatch).
func serverSpec(sv *config.Server, cfg *config.Config) json.RawMessage {
	lim := cfg.Limits
	spec := map[string]any{
		"command": sv.Command, "args": sv.Args, "env": sv.Env, "cwd": sv.Cwd,
		"url": sv.URL, "headers": sv.Headers, "transport": sv.Transport,
		"protocol_version": sv.ProtocolVersion, "start": sv.Start,
	}
	if sv.Command != "" && sv.Image == "" {
		// The executor, out of process, starts from a clean environment:
		// what a stdio server receives of the gateway's travels here.
		names := slices.Concat(childproc.ProxyEnv, sv.EnvPassthrough)
		if ex := cfg.Executors["mcp"]; ex != nil {
			names = append(names, ex.EnvPassthrough...)
		}
		if environ := childproc.PassEnv(os.Environ(), names); len(environ) > 0 {
			spec["environ"] = environ
		}
	}
	if len(sv.SecretEnv)+len(sv.SecretValues) > 0 {
		secrets := make([]string, 0, len(sv.SecretEnv)+len(sv.SecretValues))
		for _, k := range sv.SecretEnv {
			secrets = append(secrets, sv.Env[k])
		}
		spec["secrets"] = append(secrets, sv.SecretValues...) // the executor masks them in all it shows of the server
	}
	if lim.ShutdownGrace > 0 {
		spec["shutdown_grace"] = time.Duration(lim.ShutdownGrace).String()
	}
	if sv.StartTimeout > 0 {
		spec["start_timeout"] = time.Duration(sv.StartTimeout).String()
	}
	b, _ := json.Marshal(spec)
	return b
}

// sameEnviron reports whether two server specs pass the same variables of
// the gateway's environment: executors.mcp.env_passthrough, which a
// server's entry does not hold, may change in a reload.
func sameEnviron(a, b json.RawMessage) bool {
	var x, y struct {
		Environ map[string]string `json:"environ"`
	}
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && maps.Equal(x.Environ, y.Environ)
}

// ServerNamespace is the namespace of the items of sv, the server the
// config names name: its namespace setting, or else its name. "" is no
// prefix.
func ServerNamespace(name string, sv *config.Server) string {
	if sv != nil && sv.Namespace != nil {
		return *sv.Namespace
	}
	return name
}

// sourcesFor turns a config into the sources it declares.
func (g *Gateway) sourcesFor(cfg *config.Config) []*source {
	var out []*source
	for i, name := range cfg.ServerOrder {
		sv := cfg.Servers[name]
		if sv == nil || sv.Disabled {
			continue
		}
		ns := ServerNamespace(name, sv)
		id := name
		if sv.Problem != nil && (!names.Valid(name) || config.IsReservedNamespace(name)) {
			// The entry failed for its name, which names no source: shown
			// quoted, it can be neither a valid server's name nor the id
			// of the gateway's own sources ("pipelines").
			id, ns = strconv.Quote(name), ""
		}
		iso := sv.Isolation
		if iso == "" {
			if ex := cfg.Executors["mcp"]; ex != nil {
				iso = ex.Isolation
			}
		}
		out = append(out, &source{
			id: id, execName: "mcp", inprocess: iso == "inprocess",
			namespace: ns, priority: sv.Priority, order: i, kind: "mcp",
			spec: serverSpec(sv, cfg), server: sv, timeout: time.Duration(sv.Timeout), requires: sv.Requires,
			st: SourceStatus{Name: id, Executor: "mcp", State: "starting", Since: time.Now()},
		})
	}
	return out
}

// applyConfig registers every source of cfg and the plugins of scan and
// loads them in the background, at most 8 at a time; wait returns when
// each has had a first try.
func (g *Gateway) applyConfig(ctx context.Context, cfg *config.Config, scan pluginScan) (wait func()) {
	srcs := g.sourcesFor(cfg)
	srcs = append(srcs, pluginSources(scan, len(srcs))...)
	return g.launchSources(ctx, srcs)
}

// startSources loads srcs as launchSources does and waits for their first
// tries.
func (g *Gateway) startSources(ctx context.Context, srcs []*source) {
	g.launchSources(ctx, srcs)()
}

// launchSources registers srcs and gives each a first try in the
// background, at most 8 at a time; wait returns when each had it.
func (g *Gateway) launchSources(ctx context.Context, srcs []*source) (wait func()) {
	var todo []*source
	for _, s := range srcs {
		g.mu.Lock()
		if _, dup := g.sources[s.id]; dup {
			g.mu.Unlock()
			g.log.Error("source skipped: its name is taken", "source", s.id)
			continue
		}
		g.putSource(s)
		g.mu.Unlock()
		if s.server != nil && s.server.Problem != nil {
			// Its entry is wrong, or a variable of it is not set: loading
			// it again cannot help, a reload (or a restart with the
			// variable set) does. An entry that is wrong is the config's
			// error; a variable not set may be the desktop client's doing.
			s.setState("failed", "not started: "+s.server.Problem.Error())
			level := slog.LevelError
			if config.OnlyUnset(s.server.Problem) {
				level = slog.LevelWarn
			}
			g.log.Log(context.Background(), level, "server not started", "source", s.id, "err", s.server.Problem)
			continue
		}
		todo = append(todo, s)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		var loads sync.WaitGroup
		sem := make(chan struct{}, 8)
		for _, s := range todo {
			sem <- struct{}{}
			loads.Go(func() {
				defer func() { <-sem }()
				if err := g.load(ctx, s); err != nil {
					s.mu.Lock()
					s.gaveUp = errors.Is(err, host.ErrGaveUp)
					s.mu.Unlock()
					g.retry(s)
				}
			})
		}
		loads.Wait()
	})
	return wg.Wait
}

// load loads s into its executor and publishes its definitions.
func (g *Gateway) load(ctx context.Context, s *source) error {
	ex, info, err := g.execs.get(ctx, s.execName, s.inprocess)
	if err != nil {
		s.setState("failed", err.Error())
		g.logFailure(ctx, s, err, "source failed", "source", s.id)
		return err
	}
	s.setExecutor(ex)
	s.mu.Lock()
	if s.kind == "" && len(info.Kinds) > 0 {
		s.kind = info.Kinds[0]
	}
	kind := s.kind
	s.mu.Unlock()
	spec, wiring, err := g.prepareSpec(ctx, s)
	if err != nil {
		s.setState("failed", err.Error())
		g.logFailure(ctx, s, err, "source failed", "source", s.id)
		return err
	}
	s.mu.Lock()
	s.logged, s.loggedOwn = 0, 0 // the executor counts this load from 0
	s.mu.Unlock()
	defs, err := g.loadWithin(ctx, s, ex, sdk.LoadRequest{Source: s.id, Kind: kind, Spec: spec})
	if err != nil {
		// The status says what failed as the executor's own reports do,
		// without the "load source" the error carries for other readers.
		s.setState("failed", strings.TrimPrefix(err.Error(), fmt.Sprintf("load source %q: ", s.id)))
		g.logFailure(ctx, s, err, "source failed to load", "source", s.id, "executor", s.execName)
		return err
	}
	s.mu.Lock()
	s.loaded = true
	s.failLogged = "" // a failure after this one is news
	s.wired = wiring
	s.st.Tools = catalog.CountTools(defs.Tools)
	if defs.Status != nil {
		s.st.PID, s.execRestarts = defs.Status.PID, defs.Status.Restarts
		s.st.Restarts = s.retries + s.execRestarts
	}
	s.mu.Unlock()
	g.logBadDefs(s, defs)
	g.publish(s, defs)
	s.setState("ready", "")
	g.log.Info("source ready", "source", s.id, "tools", catalog.CountTools(defs.Tools), "resources", len(defs.Resources), "prompts", len(defs.Prompts))
	return nil
}

// publish is setSource for s: while a reload holds the catalog updates,
// the definitions of a source that was never served before make it
// pending (see source.pending).
func (g *Gateway) publish(s *source, defs sdk.Definitions) {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	served := g.serve(g.store.SetSources(s.catalogSource(defs)))
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case served:
		s.served = true
	case !s.served && !s.pending:
		s.pending = true
		g.pending = append(g.pending, s)
	}
}

// catalogSource is s in the catalog, with defs.
func (s *source) catalogSource(defs sdk.Definitions) catalog.Source {
	return catalog.Source{
		ID: s.id, Executor: s.execName, Namespace: s.namespace,
		Priority: s.priority, Order: s.order, Group: s.group, Skill: s.skill, Defs: defs,
		SkillFromMeta: s.id == skillsSourceID, // its prompts and resources name their skills
	}
}

// retry keeps loading a failed source with capped exponential backoff
// until it loads or the gateway stops.
func (g *Gateway) retry(s *source) {
	g.mu.Lock()
	if g.cancel == nil || g.closed {
		g.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(g.execs.runCtx)
	s.cancel = cancel
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		backoff := 500 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			err := g.load(ctx, s)
			if err == nil {
				return
			}
			s.mu.Lock()
			// A try the plugin host refused without running the file,
			// having given up on it at an earlier one, restarted nothing.
			gaveUp := errors.Is(err, host.ErrGaveUp)
			if !gaveUp || !s.gaveUp {
				s.retries++
				s.st.Restarts = s.retries + s.execRestarts
			}
			s.gaveUp = gaveUp
			s.mu.Unlock()
			backoff = min(backoff*2, 30*time.Second)
		}
	}()
}

// stop unloads s and removes it from the catalog.
func (s *source) stop(ctx context.Context) {
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Lock()
	ex, loaded := s.executor(), s.loaded
	s.loaded = false
	s.mu.Unlock()
	if ex != nil && loaded {
		if err := ex.Unload(ctx, s.id); err != nil && !errors.Is(err, sdk.ErrUnknownSource) && !errors.Is(err, sdk.ErrPluginShutdown) {
			s.setState("failed", fmt.Sprintf("unload: %v", err))
			return
		}
	}
	s.setState("stopped", "")
}

// onChange applies what an executor reports about its sources.
func (g *Gateway) onChange(exec string, ch sdk.Change) {
	g.mu.Lock()
	s := g.sources[ch.Source]
	g.mu.Unlock()
	if s == nil || s.server != nil && s.server.Problem != nil {
		// No such source, or a server whose entry kept it from starting:
		// what comes under its name is about a source of that name that
		// a reload replaced (its "stopped", say), not about this one.
		return
	}
	if ch.Status != nil {
		s.mu.Lock()
		s.st.PID, s.execRestarts = ch.Status.PID, ch.Status.Restarts
		s.st.Restarts = s.retries + s.execRestarts
		prev, loaded := s.st.State, s.loaded
		s.mu.Unlock()
		// A source whose load failed stays failed while a retry starts:
		// else it would flip between the two while it keeps failing, and
		// /readyz and a call of its tools would tell different states.
		if state := ch.Status.State; !(prev == "failed" && !loaded && (state == "starting" || state == "restarting")) {
			s.setState(state, ch.Status.LastError)
			g.logChange(s, prev, loaded, *ch.Status)
		}
	}
	if ch.Definitions != nil {
		s.mu.Lock()
		live := s.loaded
		s.st.Tools = catalog.CountTools(ch.Definitions.Tools)
		s.mu.Unlock()
		if live {
			g.logBadDefs(s, *ch.Definitions)
			g.publish(s, *ch.Definitions)
			g.log.Info("source definitions changed", "source", s.id, "executor", s.execName, "tools", catalog.CountTools(ch.Definitions.Tools),
				"resources", len(ch.Definitions.Resources), "prompts", len(ch.Definitions.Prompts))
		}
	}
	if ch.Notification != nil {
		g.fe.Notify(ch.Notification.Method, ch.Notification.Params)
	}
}

// Reload applies a new config: sources whose settings did not change keep
// running (and their clients' sessions stay); changed ones are reloaded,
// removed ones unloaded, new ones loaded. The plugins dirs are scanned
// again, and their plugins follow the same rule: a plugin whose file is
// unchanged keeps running, one whose file changed is restarted, one whose
// file went (or whose dir left the config) is stopped, a new one is
// started. Sources that leave the config leave the catalog at once (with
// the new disclosure rules, if any), as one change that clients are told
// of (one list_changed for each kind of list that changed): their tools
// must not stay listed while the reload waits for new servers' starts.
// Clients see the rest of the outcome as one change, when Reload returns:
// one list_changed for each kind of list that changed (a server restarted
// with the same definitions changes none).
func (g *Gateway) Reload(ctx context.Context, cfg *config.Config) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	old := g.cfg
	g.cfg = cfg
	g.cfgLoaded, g.cfgErr = time.Now(), nil
	g.publishRoutes()
	g.mu.Unlock()
	g.fe.SetAccess(httpAccess(cfg))
	if old.Listen.HTTP != cfg.Listen.HTTP {
		g.log.Warn("listen.http changed; the gateway keeps listening where it started until it is restarted",
			"listening", old.Listen.HTTP, "configured", cfg.Listen.HTTP)
	}

	g.execs.setKillWindow(killWindow(cfg))
	g.execs.forgetFailures()

	var stale, fresh []*source
	want := map[string]*source{}
	servers := g.sourcesFor(cfg)
	scan := scanPlugins(cfg)
	for _, s := range append(servers, pluginSources(scan, len(servers))...) {
		want[s.id] = s
	}
	var gonePlugins []string // whose processes stop
	g.mu.Lock()
	for id, cur := range g.sources {
		n, ok := want[id]
		switch {
		case cur.server != nil:
			if ok && cur.server.Equal(n.server) && cur.namespace == n.namespace && sameEnviron(cur.spec, n.spec) {
				continue
			}
		case cur.plugin != nil:
			if ok && n.plugin != nil && *cur.plugin == *n.plugin {
				continue
			}
			gonePlugins = append(gonePlugins, id)
		default:
			continue // tools, pipelines and skills reload below
		}
		stale = append(stale, cur)
		g.dropSource(id)
	}
	for id, n := range want {
		if _, ok := g.sources[id]; !ok {
			fresh = append(fresh, n)
		}
	}
	g.mu.Unlock()
	// The sources that leave go first, served at once (unless another
	// reload holds the updates); those restarted stay listed until their
	// new load is served with the rest.
	var gone, restart []string
	for _, s := range stale {
		if _, ok := want[s.id]; ok {
			restart = append(restart, s.id)
		} else {
			gone = append(gone, s.id)
		}
	}
	// New disclosure rules go with them (they need no source loaded), or
	// else with the rest.
	var disc *disclosure.Disclosure
	if !sameDisclosure(old, cfg) {
		disc = newDisclosure(cfg, func() *Gateway { return g })
	}
	if len(gone) > 0 {
		g.serveNow(gone, disc)
		disc = nil
	}
	g.hold()
	defer g.release()
	g.serveNow(nil, disc) // held: served by release
	for _, s := range stale {
		s.stop(ctx)
	}
	if len(restart) > 0 {
		g.removeSource(restart...)
	}
	var wg sync.WaitGroup
	for _, name := range gonePlugins {
		wg.Go(func() { g.execs.dropPlugin(name) })
	}
	wg.Wait()
	g.applyPlugins(scan)
	g.reloadServices(ctx, old, cfg) // services.go
	slices.SortFunc(fresh, func(a, b *source) int { return a.order - b.order })
	g.startSources(ctx, fresh)
	g.reloadTools(ctx, cfg)
	g.pipes.reload(ctx)      // pipelines.go
	g.reloadSkills(ctx, cfg) // skills.go
	var restarted, stopped, added []string
	for _, s := range stale {
		if _, ok := want[s.id]; ok {
			restarted = append(restarted, s.id)
		} else {
			stopped = append(stopped, s.id)
		}
	}
	for _, s := range fresh {
		if !slices.Contains(restarted, s.id) {
			added = append(added, s.id)
		}
	}
	slices.Sort(restarted)
	slices.Sort(stopped)
	slices.Sort(added)
	g.log.Info("config reloaded", "from", old.Source, "to", cfg.Source, "restarted", restarted, "stopped", stopped, "added", added)
	g.logConfigWarnings(cfg)
	if len(old.Auth.Tokens) > 0 || old.Admin.Writes != cfg.Admin.Writes {
		g.warnOpenListener(cfg)
	}
	return nil
}

// serveNow removes the sources with ids from the catalog and makes the
// front end serve the result under the disclosure rules d (nil: the rules
// it serves) as one change, at once: unless a reload holds the updates,
// then with its own.
func (g *Gateway) serveNow(ids []string, d *disclosure.Disclosure) {
	if len(ids) == 0 && d == nil {
		return
	}
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	snap := g.store.Load()
	if len(ids) > 0 {
		snap = g.store.RemoveSource(ids...)
	}
	if g.held > 0 {
		if d != nil {
			g.heldDisc = d
		}
		return
	}
	g.fe.Publish(snap, d)
	g.logConflicts(snap)
}

// sameDisclosure reports whether a and b set the same disclosure rules, so
// a reload can keep serving the rules it has. New rules keep the sessions'
// activations they still serve too (Disclosure.Adopt); this spares the
// clients the work of comparing.
func sameDisclosure(a, b *config.Config) bool {
	return a.Disclosure == b.Disclosure && slices.Equal(a.Pinned, b.Pinned) &&
		reflect.DeepEqual(a.Bundles, b.Bundles) && reflect.DeepEqual(a.Profiles, b.Profiles) &&
		slices.Equal(a.ServerOrder, b.ServerOrder) && (len(a.Services) == 0) == (len(b.Services) == 0) &&
		a.Skills.Configured() == b.Skills.Configured() && a.Admin == b.Admin
}
