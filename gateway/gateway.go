package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/services"
)

// Reserved names are the gateway's own (the meta-tools); no source can
// shadow them.
var Reserved = disclosure.Names

// Options configure a Gateway.
type Options struct {
	// Config is the configuration to serve; nil means config.BuiltinDefault().
	Config *config.Config
	// Logger receives the gateway's structured log; nil discards it.
	Logger *slog.Logger
	// Executable is the skillgate binary re-executed for built-in executors;
	// default os.Executable().
	Executable string
	// Version is announced to clients.
	Version string
	// StdioProfile is the profile ServeStdio serves; "" is the default endpoint.
	StdioProfile string
	// ExecutorProtocol caps the executor protocol version offered to
	// executor plugins (host.Options.MaxProtocol); 0 offers every version.
	ExecutorProtocol int
}

// Gateway is one running skillgate.
type Gateway struct {
	opts  Options
	log   *slog.Logger
	store *catalog.Store
	fe    *frontend.Server
	execs *executors
	tools *toolFolders // tool folders (tools.go)
	pipes *pipelineSet // pipelines.go

	skills *skillsRoom // skills.go; nil without skills dirs

	svc atomic.Pointer[serviceState] // services.go; swapped by Reload

	pubMu sync.Mutex // orders catalog updates to the front end
	// conflicts are the collisions of the last published snapshot, so
	// that each new one is logged once (guarded by pubMu).
	conflicts map[catalog.Conflict]bool
	// held counts the reloads in progress: while one is, catalog updates
	// go to the store only, and the front end serves them all at once,
	// with heldDisc (new disclosure rules, or nil), when the last ends, so
	// that a reload tells clients of each list that changed once (guarded
	// by pubMu).
	held     int
	heldDisc *disclosure.Disclosure
	// pending are the sources whose first definitions the hold keeps
	// from the front end (source.pending; guarded by pubMu).
	pending []*source
	// bursting says that clients are served while Start still runs:
	// catalog updates are held for startBurst and served together
	// (burst). burstOpen is the number of the burst open (0: none), which
	// counts in held, burstSeq the last one's; burstsOver says that Start
	// ended them (guarded by pubMu).
	bursting, burstsOver bool
	burstOpen, burstSeq  uint64

	// started is closed when Start has given every source a first try;
	// serving when MCP requests are served: once started is, or
	// limits.start_wait after Start began (frontend.Options.Serving).
	started, serving         chan struct{}
	startedOnce, servingOnce sync.Once
	// clients says that the gateway serves MCP clients (Handler or
	// ServeStdio was called): only then does the start wait passing
	// concern anyone (stopWaiting).
	clients atomic.Bool
	// listening is the address Serve listens on ("" before, and over
	// stdio): a reload that leaves it open beyond loopback without tokens
	// warns again (warnOpenListener).
	listening atomic.Pointer[string]
	// draining says that Serve is stopping: /readyz answers 503 from then
	// on, while the listener still serves for limits.shutdown_delay.
	draining atomic.Bool
	// now is closed by StopNow: a stop in progress waits no longer.
	now     chan struct{}
	nowOnce sync.Once
	// calls are the requests dispatched to sources and not answered yet,
	// for the warning that names those a stop cuts (guarded by callsMu).
	callsMu sync.Mutex
	calls   map[*runningCall]struct{}

	mu      sync.Mutex
	cfg     *config.Config
	sources map[string]*source // by source ID; change it with putSource and dropSource
	// refused are the plugins of the plugins dirs that are not served, and
	// skipped what the dirs hold that is no plugin, as the last scan found
	// them (plugins.go).
	refused []SourceStatus
	skipped map[string]bool
	// routes is what calls read, without a lock, to reach a source: a
	// copy of sources and the request timeout, republished under mu
	// whenever either changes (routes.go).
	routes atomic.Pointer[routeTable]
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool

	// cfgLoaded is when cfg was given (New, Reload); cfgErr why the config
	// file could not be loaded since, and cfgFailed when (ReloadFailed).
	// Guarded by mu.
	cfgLoaded, cfgFailed time.Time
	cfgErr               error
}

// New builds a gateway. It starts nothing.
func New(opts Options) (*Gateway, error) {
	if opts.Config == nil {
		opts.Config = config.BuiltinDefault()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the skillgate binary to run built-in executors: %w", err)
		}
		opts.Executable = exe
	}
	cfg := opts.Config
	var g *Gateway
	disc := newDisclosure(cfg, func() *Gateway { return g })
	if opts.StdioProfile != "" && !disc.HasProfile(opts.StdioProfile) {
		return nil, fmt.Errorf("%w %q; the profiles are %v (see profiles: in %s)", ErrUnknownProfile, opts.StdioProfile, disc.Profiles(), cfg.Source)
	}
	g = &Gateway{
		opts:    opts,
		log:     opts.Logger,
		cfg:     cfg,
		sources: map[string]*source{},
		started: make(chan struct{}),
		serving: make(chan struct{}),
		now:     make(chan struct{}),
		calls:   map[*runningCall]struct{}{},
		store: catalog.NewStore(catalog.Options{
			Separator: cfg.Names.Separator,
			Policy:    cfg.Names.Collisions,
			Reserved:  Reserved,
			// skill:// is the skills server's alone (catalog.Options).
			ReservedSchemes: map[string]string{"skill": skillsSourceID},
		}),
		cfgLoaded: time.Now(),
	}
	g.publishRoutes()
	g.pipes = newPipelineSet(g)
	g.execs = newExecutors(opts.Executable, slog.New(&restartsLog{next: g.log.Handler(), g: g}), opts.ExecutorProtocol, time.Duration(cfg.Limits.PluginKillWindow))
	g.tools = newToolFolders(g)
	g.newServices(cfg)
	g.fe = frontend.New(router{g}, frontend.Options{
		Name:         "skillgate",
		Version:      opts.Version,
		Logger:       g.log,
		Disclosure:   disc,
		StdioProfile: opts.StdioProfile,
		Methods:      g.skillsMethods(),
		Extensions:   skillsExtensions(cfg),
		HTTP:         httpAccess(cfg),
		MaxSessions:  cfg.Limits.MaxSessions,
		Serving:      g.serving,
	})
	return g, nil
}

// unknownToolHint explains a call of a tool the catalog lacks when its
// name starts with the namespace of a server that is not ready: its tools
// are missing because the server is.
func (g *Gateway) unknownToolHint(name string) string {
	if h := g.heldBackPipeline(name); h != "" {
		return h // its own problems, not the first of the folder's
	}
	st, ok := g.ownerNotReady(name, false)
	if !ok {
		return ""
	}
	return fmt.Sprintf("its %s %q is %s (see /readyz or skillgate servers)", st.Kind(), st.Name, stateWhy(st))
}

// ownerNotReady returns the status of the source whose namespace prefixes
// the tool name (the longest such namespace; with servers, only among
// servers), and whether that source is not ready: then the tool is
// missing because its source is.
func (g *Gateway) ownerNotReady(name string, servers bool) (SourceStatus, bool) {
	g.mu.Lock()
	sep := g.cfg.Names.Separator
	if sep == "" {
		sep = catalog.DefaultSeparator
	}
	var match *source
	for _, s := range g.sources {
		if s.internal || s.namespace == "" || (servers && s.server == nil) || !strings.HasPrefix(name, s.namespace+sep) {
			continue
		}
		if match == nil || len(s.namespace) > len(match.namespace) {
			match = s
		}
	}
	g.mu.Unlock()
	if match == nil {
		return SourceStatus{}, false
	}
	st := match.status()
	return st, st.State != "ready"
}

// stateWhy is a status's state with its last error, if any.
func stateWhy(st SourceStatus) string {
	if st.LastError == "" {
		return st.State
	}
	return st.State + ": " + oneline.Cut(st.LastError, 300)
}

// httpAccess is the HTTP endpoint's access rules in cfg; a reload applies
// them to the requests that follow.
func httpAccess(cfg *config.Config) frontend.HTTPOptions {
	hosts := cfg.Listen.AllowedHosts
	// The name listen.http binds (gw.lan:8811) is the gateway's own.
	if h, _, err := net.SplitHostPort(cfg.Listen.HTTP); err == nil && h != "" && net.ParseIP(h) == nil && !config.LoopbackAddr(h) {
		hosts = append(slices.Clone(hosts), h)
	}
	return frontend.HTTPOptions{
		AllowedOrigins: cfg.Listen.AllowedOrigins,
		AllowedHosts:   hosts,
		Tokens:         cfg.Auth.Tokens,
		BodyCap:        int64(cfg.Limits.HTTPBodyCap),
	}
}

// startWait is limits.start_wait: how long an MCP request that arrives
// while the gateway starts waits for the sources' first tries, so that a
// client's first tools/list is complete. It is bounded so that one slow or
// hung source does not hold every client for its whole start timeout; a
// source that is not ready by then is served when it is, with a
// list_changed.
func startWait(cfg *config.Config) time.Duration { return time.Duration(cfg.Limits.StartWait) }

// stopWaiting lets MCP requests through while Start still runs: the
// start wait has passed. It logs the sources still starting, whose tools a
// client that lists only once (many desktop clients) will not see; not
// for a gateway that serves no client (a one-shot command's, which waits
// for Start and tells of the servers that are not ready itself).
func (g *Gateway) stopWaiting(wait time.Duration) {
	if g.isStarted() {
		return
	}
	g.startBursts()
	g.markServing()
	if !g.clients.Load() {
		return
	}
	var starting []string
	for _, s := range g.Status() {
		if s.State == "starting" {
			starting = append(starting, s.Name)
		}
	}
	g.log.Warn("serving clients before every server has started: their tools are listed once ready, with notifications/tools/list_changed; "+
		"a client that lists tools only once misses them (raise limits.start_wait)", "start_wait", wait, "starting", starting)
}

// Start launches the executors and loads every source. A source that fails
// to load is reported in Status and retried in the background; it never
// stops the others. Start returns once every source has had a first try.
func (g *Gateway) Start(ctx context.Context) error {
	defer g.markStarted()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	runCtx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	cfg := g.cfg
	// Requests and reloads may come while Start runs: what they read is
	// set under the locks.
	g.execs.mu.Lock()
	g.execs.watch = func(exec string, ch sdk.Change) { g.onChange(exec, ch) }
	g.execs.runCtx = runCtx
	g.execs.wg = &g.wg
	g.execs.mu.Unlock()
	g.mu.Unlock()
	// local is closed once the gateway's own sources (tool folders,
	// pipelines, skills) had their first try: the start wait lets requests
	// through only then, so that a client's first tools/list has them even
	// when a server is slow to start.
	local := make(chan struct{})
	localDone := sync.OnceFunc(func() { close(local) })
	defer localDone()
	if wait := startWait(cfg); wait > 0 {
		bound := time.AfterFunc(wait, func() {
			select {
			case <-local:
			case <-g.started:
			}
			g.stopWaiting(wait)
		})
		defer bound.Stop()
	} else {
		g.markServing()
	}
	// Catalog updates of the servers that are ready after the start wait
	// (and of the pipelines that call them) reach clients in bursts of
	// one list_changed each, not one per update.
	defer g.endStartBursts()

	g.fe.Update(g.store.Load())
	scan := scanPlugins(cfg)
	g.applyPlugins(scan)
	// The servers' executors start while the rest is set up.
	wants := map[string]bool{}
	for _, s := range g.sourcesFor(cfg) {
		wants[s.execName] = s.inprocess
	}
	g.execs.prestart(ctx, wants)
	g.startAdmin(ctx)
	g.startServices(ctx, cfg)
	// The servers and plugins load while the gateway's own sources do: a
	// slow server holds back neither the tool folders nor the skills, and
	// the pipelines that call its tools wait for it as pending (their
	// problem says it is starting) and are compiled again once it is
	// ready. The servers are registered before the pipelines compile, so
	// they know which tools may still come.
	waitSources := g.applyConfig(ctx, cfg, scan)
	g.startTools(ctx, cfg)
	g.startPipelines(ctx)
	g.startSkills(ctx, cfg)
	localDone()
	waitSources()
	// The pipelines that waited for a server compiled while it started:
	// now that each server had its first try, they are compiled again
	// where that changed anything, so that what Start leaves (a one-shot
	// command reads it) says which servers failed, not that they are
	// starting, and serves the pipelines of servers that became ready.
	g.pipes.settle(ctx)
	g.refreshSkillPipelines(ctx)
	g.logConfigWarnings(cfg)
	return nil
}

// warnOpenListener logs cfg's ListenWarning for the address Serve
// listens on, if any: at the start, and after a reload that took the
// tokens away or changed admin.writes.
func (g *Gateway) warnOpenListener(cfg *config.Config) {
	addr := g.listening.Load()
	if addr == nil {
		return
	}
	if w := cfg.ListenWarning(*addr); w != nil {
		g.log.Warn("the MCP endpoint is open beyond loopback without auth.tokens", "problem", w.Error())
	}
}

// startBurst is how long catalog updates wait to be served together while
// the gateway serves clients before its start is over (a server ready after
// the start wait): its update, and those of the pipelines compiled again
// for its tools, reach clients as one list_changed per kind of list.
const startBurst = 75 * time.Millisecond

// burst holds the catalog updates that come within startBurst of the
// first, while clients are served before the start is over; called with
// pubMu held, it reports whether serve must hold this update.
func (g *Gateway) burst() bool {
	if !g.bursting {
		return false
	}
	if g.burstOpen != 0 {
		return true
	}
	g.held++
	g.burstSeq++
	n := g.burstSeq
	g.burstOpen = n
	time.AfterFunc(startBurst, func() { g.flushBurst(n) })
	return true
}

// flushBurst serves the updates the burst n (0: the one open, if any)
// held: the pipelines are compiled again first, against the catalog with
// the updates, so that those waiting for a server come with it.
func (g *Gateway) flushBurst(n uint64) {
	open := func() bool { return g.burstOpen != 0 && (n == 0 || g.burstOpen == n) }
	g.pubMu.Lock()
	ok := open()
	g.pubMu.Unlock()
	if !ok {
		return
	}
	g.mu.Lock()
	runCtx, closed := g.execs.runCtx, g.closed
	g.mu.Unlock()
	if !closed && runCtx != nil {
		g.pipes.reload(runCtx)
		g.refreshSkillPipelines(runCtx)
	}
	g.pubMu.Lock()
	if ok = open(); ok {
		g.burstOpen = 0
	}
	g.pubMu.Unlock()
	if ok {
		g.release()
	}
}

// startBursts makes the catalog updates come in bursts (burst): clients
// are served while Start still runs.
func (g *Gateway) startBursts() {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	if !g.burstsOver {
		g.bursting = true
	}
}

// endStartBursts serves the updates a burst holds, at the end of Start:
// from then on updates are served as they come.
func (g *Gateway) endStartBursts() {
	g.pubMu.Lock()
	open := g.burstOpen != 0
	g.bursting, g.burstsOver = false, true
	g.pubMu.Unlock()
	if open {
		g.flushBurst(0)
	}
}

// markStarted records that Start is done.
func (g *Gateway) markStarted() {
	g.startedOnce.Do(func() { close(g.started) })
	g.markServing()
}

// markServing lets MCP requests through (frontend.Options.Serving).
func (g *Gateway) markServing() {
	g.servingOnce.Do(func() { close(g.serving) })
}

// isServing reports whether MCP requests are served (frontend.Options.Serving).
func (g *Gateway) isServing() bool {
	select {
	case <-g.serving:
		return true
	default:
		return false
	}
}

// isStarted reports whether Start is done.
func (g *Gateway) isStarted() bool {
	select {
	case <-g.started:
		return true
	default:
		return false
	}
}

// startAsync runs Start in the background, for Serve and ServeStdio to
// answer at once; errc receives its error. stop cancels it and waits for
// it to return.
func (g *Gateway) startAsync(ctx context.Context) (errc <-chan error, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch <- g.Start(ctx)
	}()
	return ch, func() { cancel(); <-done }
}

// setSource publishes a source's definitions and makes the front end serve
// them before returning, so a caller that saw it return (a ready /readyz)
// also sees the tools — or, while a reload is in progress, when the reload
// ends (hold). Updates are applied in order.
func (g *Gateway) setSource(src ...catalog.Source) {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	g.serve(g.store.SetSources(src...))
}

// removeSource is setSource's opposite, for the sources with ids at once.
func (g *Gateway) removeSource(ids ...string) {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	g.serve(g.store.RemoveSource(ids...))
}

// serve makes the front end serve snap, unless a reload holds the updates;
// it reports whether it did. Called with pubMu held.
func (g *Gateway) serve(snap *catalog.Snapshot) bool {
	if g.held > 0 || g.burst() {
		return false
	}
	g.fe.Update(snap)
	g.logConflicts(snap)
	return true
}

// hold keeps catalog updates from the front end until release: a reload
// changes many sources, and each change the front end serves sends every
// client a list_changed.
func (g *Gateway) hold() {
	g.pubMu.Lock()
	g.held++
	g.pubMu.Unlock()
}

// release ends a hold: when no other reload holds the updates, the front
// end serves the catalog as it now is, and the disclosure rules set
// meanwhile, as one change.
func (g *Gateway) release() {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	if g.held--; g.held > 0 {
		return
	}
	snap, d := g.store.Load(), g.heldDisc
	g.heldDisc = nil
	g.fe.Publish(snap, d)
	g.logConflicts(snap)
	for _, s := range g.pending {
		s.mu.Lock()
		s.pending, s.served = false, true
		s.mu.Unlock()
	}
	g.pending = nil
}

// logConflicts logs each collision of snap that the last published
// snapshot did not have: an item renamed, dropped or skipped is reported
// where the operator looks, not only by `skillgate tools list`. A
// collision the last snapshot had and snap has not is logged as resolved,
// so the log does not leave it standing. Called with pubMu held.
func (g *Gateway) logConflicts(snap *catalog.Snapshot) {
	now := make(map[catalog.Conflict]bool, len(snap.Conflicts()))
	for _, c := range snap.Conflicts() {
		now[c] = true
		if g.conflicts[c] {
			continue
		}
		if c.Unreadable() {
			continue // logBadDefs told of it, with its index and what is wrong
		}
		if c.Own() {
			// The source's author has something to fix: say what.
			args := []any{"source", c.Loser, "kind", c.Kind.String(), "name", c.Original}
			if c.Renamed != "" {
				args = append(args, "served_as", c.Renamed)
			}
			g.log.Warn(c.String(), args...)
			continue
		}
		level := slog.LevelWarn
		if c.Renamed != "" {
			level = slog.LevelInfo
		}
		g.log.Log(context.Background(), level, "name collision", "kind", c.Kind.String(), "name", c.Name,
			"winner", c.Winner, "loser", c.Loser, "resolution", c.Resolution)
	}
	for c := range g.conflicts {
		if !now[c] && !c.Own() {
			g.log.Info("name collision resolved", "kind", c.Kind.String(), "name", c.Name, "winner", c.Winner, "loser", c.Loser)
		}
	}
	g.conflicts = now
}

// Snapshot returns the catalog the front end serves: once an update is
// published there, clients see it.
func (g *Gateway) Snapshot() *catalog.Snapshot { return g.fe.Snapshot() }

// ToolCards returns what find_tools finds with no query on the default
// endpoint, page by page: every tool a client there can run, as
// `skillgate tools list --json` prints them, from the config or (through
// find_tools itself) from a running gateway.
func (g *Gateway) ToolCards(ctx context.Context) ([]disclosure.Card, error) {
	snap := g.Snapshot()
	cards := []disclosure.Card{}
	for cursor := ""; ; {
		args, _ := json.Marshal(map[string]any{"limit": 50, "cursor": cursor})
		res, err := g.disclosure().CallMeta(ctx, snap, disclosure.Request{}, disclosure.FindTools, args, nil, nopCall{})
		if err != nil {
			return nil, err
		}
		var r struct {
			Structured disclosure.FindResult `json:"structuredContent"`
			IsError    bool                  `json:"isError"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.IsError {
			return nil, fmt.Errorf("%s: %s", disclosure.FindTools, res)
		}
		cards = append(cards, r.Structured.Tools...)
		if cursor = r.Structured.NextCursor; cursor == "" || len(r.Structured.Tools) == 0 {
			return cards, nil
		}
	}
}

// disclosure returns the disclosure rules being served.
func (g *Gateway) disclosure() *disclosure.Disclosure { return g.fe.Disclosure() }

// Handler returns the gateway's HTTP handler: the MCP endpoint at /mcp,
// profiles at /mcp/p/<name>, /healthz, /readyz and /stats. /healthz
// answers at once; /readyz says starting (and not ready) until Start is
// done, and draining (not ready) once Serve stops; /readyz?min=serving
// answers 200 while MCP requests are served and Serve is not stopping,
// whatever the sources' states. An MCP request that reads the catalog
// (tools/list, tools/call, ...) and comes while Start runs waits for it, at
// most limits.start_wait after Start began; initialize, ping,
// logging/setLevel and server/discover are answered at once
// (frontend.Options.Serving).
func (g *Gateway) Handler() http.Handler {
	g.clients.Store(true)
	mux := http.NewServeMux()
	fe := g.fe.Handler() // it holds requests while Start runs (see above)
	mux.Handle("/mcp", fe)
	mux.Handle("/mcp/", fe)
	mux.Handle("/stats", g.fe.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{
			"endpoints": g.Stats(),
			"sessions":  g.disclosure().Sessions(),
			"estimator": "tokens are estimated; see README, section Progressive disclosure",
		})
	})))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		var svcs []services.Status
		if g.fe.Trusted(r) {
			svcs = g.ServicesStatus(r.Context()) // first: it refreshes what sources show
		}
		minimum := r.URL.Query().Get("min")
		if minimum != "" && minimum != "serving" {
			http.Error(w, fmt.Sprintf("Bad Request: unknown min=%q: use /readyz?min=serving (200 once clients are served, even with a server that failed) or /readyz (200 once every server is ready)", minimum), http.StatusBadRequest)
			return
		}
		st := g.Status()
		starting := !g.isStarted()
		draining := g.draining.Load()
		serving := g.isServing() && !draining
		ready := !starting && !draining
		for _, s := range st {
			// An invalid tool folder waits for an edit; it does not make
			// the gateway unready (see tools.go).
			if s.State != "ready" && s.State != stateInvalid {
				ready = false
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if ok := ready || minimum == "serving" && serving; !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		body := map[string]any{"ready": ready, "starting": starting, "serving": serving, "draining": draining}
		if !g.fe.Trusted(r) {
			// A load balancer's probe needs the status code; sources' last
			// errors, pids and commands are for those holding a token.
			body["detail"] = "send Authorization: Bearer <token> (a token of auth.tokens) to see each source's state"
			_ = json.NewEncoder(w).Encode(body)
			return
		}
		body["sources"], body["services"], body["executors"], body["config"] = st, svcs, g.ExecutorsStatus(), g.ConfigStatus()
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}

// Run starts the gateway, serves HTTP on the configured address until ctx
// is done, then shuts everything down.
func (g *Gateway) Run(ctx context.Context) error {
	addr := g.cfg.Listen.HTTP
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (choose a free host:port with listen.http or --listen)", addr, err)
	}
	return g.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened. It serves at once, while
// the gateway starts (see Handler). When ctx is done it stops: /readyz
// answers 503 (draining) while new requests are still served for
// limits.shutdown_delay; then the listener closes, streams that wait for
// notifications end, and requests in flight get limits.drain_timeout to
// finish. Those still running then are cancelled and answered with a
// JSON-RPC error that asks to send them again, before their connections
// close. Last, every source is stopped (Close). StopNow ends the delay
// and the drain early.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	defer g.Close()
	g.clients.Store(true)
	started, stopStart := g.startAsync(ctx)
	defer stopStart()
	// Requests run on base, not on ctx: they go on while the gateway
	// drains. When the drain ends their calls are cut (cutCalls), and
	// base ends for what a request still waits for.
	base, cut := context.WithCancelCause(context.Background())
	defer cut(nil)
	// No ReadTimeout, which would end the long-lived streams: bodies get
	// deadlines of their own (frontend.Server.BoundBodies). IdleTimeout
	// closes a keep-alive connection that waits for its next request; a
	// stream is a response being written, never idle.
	srv := &http.Server{Handler: g.fe.BoundBodies(g.Handler()), ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: idleTimeout, BaseContext: func(net.Listener) context.Context { return base }}
	// Shutdown waits for connections to go idle, and a stream never does.
	srv.RegisterOnShutdown(g.fe.EndStreams)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	g.log.Info("serving MCP", "url", config.ServingURL(ln.Addr().String()))
	addr := ln.Addr().String()
	g.listening.Store(&addr)
	g.mu.Lock()
	cfg := g.cfg
	g.mu.Unlock()
	g.warnOpenListener(cfg)
	shutdown := func(reason error) {
		g.mu.Lock()
		delay, drain := time.Duration(g.cfg.Limits.ShutdownDelay), time.Duration(g.cfg.Limits.DrainTimeout)
		g.mu.Unlock()
		g.draining.Store(true)
		if delay > 0 {
			g.log.Info("draining: /readyz answers 503 while new requests are still served (a second signal stops at once)",
				"reason", reason.Error(), "shutdown_delay", delay)
			g.waitOrNow(delay)
		}
		g.log.Info("stopping", "reason", reason.Error(), "drain_timeout", drain)
		shutCtx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		go func() {
			select {
			case <-g.now:
				cancel()
			case <-shutCtx.Done():
			}
		}()
		if srv.Shutdown(shutCtx) == nil {
			return
		}
		msg := "requests still running after limits.drain_timeout; answering them with an error that asks to send them again and closing their connections"
		if g.stoppingNow() {
			msg = "stopping at once (a second signal): answering the requests still running with an error that asks to send them again and closing their connections"
		}
		// The calls are cancelled first, and write their error answers
		// (some run on a context of their own: a 2026-07-28 call that may
		// ask its client for input); then whatever else a request waits
		// for, and a connection still busy after cutGrace is closed.
		running := g.cutCalls()
		g.log.Warn(msg, "drain_timeout", drain, "cut", len(running), "calls", running)
		graceCtx, stop := context.WithTimeout(context.Background(), cutGrace)
		defer stop()
		if srv.Shutdown(graceCtx) != nil {
			cut(errStopping)
			_ = srv.Close()
		}
	}
	for {
		select {
		case <-ctx.Done():
			shutdown(context.Cause(ctx))
			return nil
		case err := <-started:
			if err != nil {
				shutdown(fmt.Errorf("start failed: %w", err))
				return err
			}
			started = nil
		case err := <-errc:
			return err
		}
	}
}

// idleTimeout is how long an HTTP connection may wait for its next
// request: without it every idle keep-alive connection holds a descriptor
// and a goroutine for good. A variable so that tests can shorten it.
var idleTimeout = 2 * time.Minute

// errStopping is the cause of the requests a stop cuts, and what they
// are answered (router.dispatch): the stdio front end's error, so that
// both transports answer alike.
var errStopping = frontend.ErrStopping

// cutGrace bounds how long the requests a stop cut get to write their
// error answers before their connections are closed.
const cutGrace = 5 * time.Second

// StopNow makes a stop in progress, or the next one, wait no longer:
// Serve ends limits.shutdown_delay and limits.drain_timeout at once, and
// the requests still running are answered with an error that asks to
// send them again. The CLI calls it on a second SIGTERM or Ctrl-C.
func (g *Gateway) StopNow() {
	g.nowOnce.Do(func() { close(g.now) })
}

// stoppingNow reports whether StopNow was called.
func (g *Gateway) stoppingNow() bool {
	select {
	case <-g.now:
		return true
	default:
		return false
	}
}

// waitOrNow waits for d, or until StopNow.
func (g *Gateway) waitOrNow(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-g.now:
	}
}

// runningCall is a request dispatched to a source and not answered yet.
type runningCall struct {
	method, name, client string
	cancel               context.CancelCauseFunc
}

// trackCall records a request of it (method) as running, on the returned
// context, until the returned func is called; cutCalls cancels it.
func (g *Gateway) trackCall(ctx context.Context, method string, it *catalog.Item) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	c := &runningCall{method: method, name: it.Name, client: frontend.ClientOf(ctx), cancel: cancel}
	g.callsMu.Lock()
	g.calls[c] = struct{}{}
	g.callsMu.Unlock()
	return ctx, func() {
		g.callsMu.Lock()
		delete(g.calls, c)
		g.callsMu.Unlock()
		cancel(nil)
	}
}

// cutCalls cancels the requests running with errStopping, and describes
// them, sorted: "tools/call NAME (session CLIENT)".
func (g *Gateway) cutCalls() []string {
	g.callsMu.Lock()
	defer g.callsMu.Unlock()
	out := make([]string, 0, len(g.calls))
	for c := range g.calls {
		c.cancel(errStopping)
		d := c.method + " " + c.name
		if c.client != "" {
			d += " (session " + c.client + ")"
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// ServeStdio starts the gateway and serves one client over in/out until in
// closes or ctx is done, then shuts everything down. The client is read
// from at once; its requests wait for the start as HTTP ones do (see
// Handler).
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	defer g.Close()
	g.clients.Store(true)
	_, stopStart := g.startAsync(ctx)
	defer stopStart()
	err := g.fe.ServeStdio(ctx, in, out)
	reason := "the client closed stdin"
	if ctx.Err() != nil {
		reason = context.Cause(ctx).Error()
	} else if err != nil {
		reason = err.Error()
	}
	g.log.Info("stopping", "reason", reason)
	return err
}

// Close unloads every source and kills every executor, each bounded by
// limits.plugin_kill_window. It is idempotent and safe after a partial
// start.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	cancel := g.cancel
	srcs := make([]*source, 0, len(g.sources))
	for _, s := range g.sources {
		srcs = append(srcs, s)
	}
	window := killWindow(g.cfg)
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	// Each source gets the time a plugin gets to stop what it runs; the
	// plugins, stopped next, get it again for what is left.
	ctx, stop := context.WithTimeout(context.Background(), window)
	defer stop()
	var wg sync.WaitGroup
	for _, s := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop(ctx)
		}()
	}
	wg.Wait()
	g.closeServices()
	err := g.execs.close()
	g.wg.Wait()
	return err
}

// ConfigStatus is the config the gateway runs, as /readyz shows it under
// "config".
type ConfigStatus struct {
	// File is the file the running config was read from.
	File string `json:"file"`
	// Loaded is when the running config was applied (start or reload).
	Loaded time.Time `json:"loaded"`
	// Stale says that the file changed but did not load: the gateway runs
	// the config it loaded before until a reload succeeds.
	Stale bool `json:"stale"`
	// Error is why the file did not load, with file:line.
	Error string `json:"error,omitempty"`
	// Failed is when it failed to load.
	Failed *time.Time `json:"failed,omitempty"`
}

// ConfigStatus reports the running config and whether the file's last
// load failed (ReloadFailed).
func (g *Gateway) ConfigStatus() ConfigStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := ConfigStatus{File: g.cfg.Source, Loaded: g.cfgLoaded}
	if g.cfgErr != nil {
		failed := g.cfgFailed
		st.Stale, st.Error, st.Failed = true, g.cfgErr.Error(), &failed
	}
	return st
}

// ReloadFailed records that the config file could not be loaded for a
// reload (err says why): the gateway keeps running its config, and
// ConfigStatus, so /readyz, shows it stale with err until a Reload.
func (g *Gateway) ReloadFailed(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cfgErr, g.cfgFailed = err, time.Now()
}

// killWindow is cfg's limits.plugin_kill_window, or the host's default.
func killWindow(cfg *config.Config) time.Duration {
	if d := time.Duration(cfg.Limits.PluginKillWindow); d > 0 {
		return d
	}
	return host.DefaultKillWindow
}

// SourceStatus is one source's state, as /readyz and `skillgate servers`
// show it.
type SourceStatus struct {
	Name      string `json:"name"`
	Executor  string `json:"executor"`
	State     string `json:"state"`
	PID       int    `json:"pid,omitempty"`
	Restarts  int    `json:"restarts"`
	LastError string `json:"last_error,omitempty"`
	// Tools is how many tools it serves: not those the catalog drops (a
	// name the source lists twice, a tool without a name).
	Tools int       `json:"tools"`
	Since time.Time `json:"since"`
	// Problems lists every problem of a source made of files (pipelines),
	// each with its file:line.
	Problems []string `json:"problems,omitempty"`
	// Services are the services the source requires, with their states.
	Services []ServiceState `json:"services,omitempty"`
}

// ExecutorStatus is one executor plugin process's state, as /readyz and
// `skillgate servers` show it. Executors run in process are not listed.
type ExecutorStatus struct {
	Name  string `json:"name"`
	State string `json:"state"`
	PID   int    `json:"pid,omitempty"`
	// Protocol is the executor protocol version negotiated with the process.
	Protocol int `json:"protocol,omitempty"`
	// Calls is what its calls ride on: "socket" or "stream".
	Calls     string    `json:"calls,omitempty"`
	Restarts  int       `json:"restarts"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
}

// ExecutorsStatus lists the executor plugin processes started so far,
// sorted by name.
func (g *Gateway) ExecutorsStatus() []ExecutorStatus {
	ps := g.execs.plugins()
	out := make([]ExecutorStatus, 0, len(ps))
	for _, p := range ps {
		st := p.Status()
		out = append(out, ExecutorStatus{
			Name: p.Name(), State: string(st.State), PID: st.PID, Protocol: st.Protocol, Calls: st.Calls,
			Restarts: st.Restarts, LastError: st.LastError, Since: st.Since,
		})
	}
	return out
}

// Status lists every source's state, and the plugins refused a source
// (failed, saying why), sorted by name.
func (g *Gateway) Status() []SourceStatus {
	g.mu.Lock()
	srcs := make([]*source, 0, len(g.sources))
	for _, s := range g.sources {
		srcs = append(srcs, s)
	}
	out := make([]SourceStatus, 0, len(srcs)+len(g.refused))
	out = append(out, g.refused...)
	g.mu.Unlock()
	for _, s := range srcs {
		if !s.internal {
			st := s.status()
			st.Services = g.sourceServices(s)
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b SourceStatus) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Executor, b.Executor))
	})
	return out
}

// router sends front-end requests to the item's executor.
type router struct{ g *Gateway }

func (r router) Call(ctx context.Context, it *catalog.Item, method string, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	ctx, done := r.g.trackCall(ctx, method, it)
	defer done()
	if method == "tools/call" {
		var refused json.RawMessage
		if ctx, refused = r.g.enterTool(ctx, it.Name); refused != nil {
			return refused, nil // the call-chain guard (pipelines.go)
		}
	}
	return r.dispatch(ctx, it, method, params, call)
}

// The request timeouts, as the causes of a dispatched call's context.
var (
	errRequestTimeout    = errors.New("request timeout")
	errMaxRequestTimeout = errors.New("max request timeout")
)

// dispatch is Call past the call-chain guard. A call gets the source's
// timeout (or limits.request_timeout) without a result or progress from
// the upstream, and limits.max_request_timeout in all (DESIGN.md §7).
func (r router) dispatch(ctx context.Context, it *catalog.Item, method string, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	g := r.g
	if method == "tools/call" {
		if refused := g.writeRefusal(ctx, it); refused != nil {
			return refused, nil // admin.writes (admin.go)
		}
	}
	rt := g.routes.Load()
	src, timeout := rt.sources[it.Source], rt.timeout
	if src == nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("source %q of %s is gone; list again", it.Source, it.Name)}
	}
	if src.timeout > 0 {
		timeout = src.timeout
	}
	ex := src.executor()
	if ex == nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: fmt.Sprintf("%s: source %s is not loaded (see /readyz)", it.Name, it.Source)}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if rt.max > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, rt.max, errMaxRequestTimeout)
		defer stop()
	}
	call = g.withChain(ctx, call)
	if timeout > 0 {
		idle := time.AfterFunc(timeout, func() { cancel(errRequestTimeout) })
		defer idle.Stop()
		call = progressCall{Call: call, progress: func() { idle.Reset(timeout) }}
	}
	wiring, err := g.checkRequires(ctx, src)
	if err == nil {
		err = g.rewire(ctx, src, wiring)
	}
	if err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()}
	}
	if len(wiring) > 0 && method == "tools/call" && src.execName == "script" {
		params = withWiring(params, wiring)
	}
	res, err := ex.Call(ctx, sdk.CallRequest{Source: it.Source, Method: method, Params: params, Client: frontend.ClientOf(ctx)}, call)
	if err != nil {
		// Only a timeout of this call's own is reported as one; a deadline
		// of the caller's (a pipeline's timeout) is the caller's to tell.
		if ctx.Err() != nil {
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, errStopping):
				// Serve cut it: the client or a load balancer may retry.
				return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: errStopping.Error()}
			case errors.Is(cause, errRequestTimeout):
				return nil, fmt.Errorf("%s: no result and no progress within %s (raise %s)", it.Name, timeout, src.timeoutSetting())
			case errors.Is(cause, errMaxRequestTimeout):
				return nil, fmt.Errorf("%s: no result within %s, the most a request may take even while it reports progress (raise limits.max_request_timeout)", it.Name, rt.max)
			}
		}
		var rpcErr *sdk.RPCError
		if errors.As(err, &rpcErr) {
			return nil, err
		}
		return nil, fmt.Errorf("%s (source %s): %w", it.Name, it.Source, err)
	}
	return res, nil
}

// timeoutSetting names the setting of s's request timeout.
func (s *source) timeoutSetting() string {
	switch {
	case s.timeout == 0:
		return "limits.request_timeout"
	case s.server != nil:
		return "servers." + s.id + ".timeout"
	default:
		return "the tool's timeout"
	}
}

// progressCall tells progress of a dispatched call to progress (the
// request timeout starts again) and passes it on.
type progressCall struct {
	sdk.Call
	progress func()
}

func (c progressCall) Progress(p sdk.Progress) error {
	c.progress()
	return c.Call.Progress(p)
}

// CallTool calls a tool of the catalog by its exposed name, as a client's
// tools/call would, and returns the CallToolResult JSON. A name the catalog
// lacks is a JSON-RPC invalid-params error (*sdk.RPCError, as
// docs/EXECUTORS.md documents for an executor's Call.CallTool) that
// matches frontend.ErrUnknownTool. A ctx that carries no frontend.Origin
// is the gateway's own process (the CLI's commands), which admin.writes:
// trusted lets call the management tools that change what the gateway
// runs.
func (g *Gateway) CallTool(ctx context.Context, name string, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if _, ok := frontend.OriginOf(ctx); !ok {
		ctx = frontend.WithOrigin(ctx, frontend.Origin{Transport: frontend.TransportProcess})
	}
	return g.callTool(ctx, name, args, call)
}

// callTool is CallTool for a caller whose ctx carries the Origin of the
// client it calls for: a call with none is refused a write (admin.go).
func (g *Gateway) callTool(ctx context.Context, name string, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	it, ok := g.store.Load().Tool(name)
	if !ok {
		return nil, g.unknownTool(name)
	}
	params, err := json.Marshal(map[string]any{"name": it.Original, "arguments": args})
	if err != nil {
		return nil, err
	}
	return router{g}.Call(ctx, it, "tools/call", params, call)
}

// Kind names what the source s is, for messages: a server, a
// plugin, a tool folder, a skill's tool folder or pipelines, the config's
// pipelines or the gateway's own tools. Source IDs carry their kind
// (tool:NAME, skill-tool:SKILL/NAME ...), as the gateway names them.
func (s SourceStatus) Kind() string {
	switch {
	case s.Executor == "mcp":
		return "server"
	case strings.HasPrefix(s.Name, "tool:"):
		return "tool folder"
	case strings.HasPrefix(s.Name, "skill-tool:"):
		return "skill tool folder"
	case strings.HasPrefix(s.Name, "skill-pipelines:"):
		return "skill pipelines"
	case s.Name == "pipelines" && s.Executor == "pipelines":
		return "pipelines"
	case s.Executor == "gateway":
		return "gateway tools"
	case s.Executor == s.Name, strings.HasPrefix(s.Name, "plugin:"):
		return "plugin"
	}
	return "source"
}
