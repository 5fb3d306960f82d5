package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Pipelines are served by an in-process executor as one source,
// "pipelines", whose tools are pipelines__<name>. A run calls the catalog's
// tools through the router, so steps reach real upstreams, scripts and
// other pipelines, each under the call-chain guard.
//
// Loading: every problem of every file is kept (with file:line) and shown
// in Status (state "invalid", which does not fail /readyz); the pipelines
// that compiled are served. Tool names are checked
// against the catalog, which fills in asynchronously (upstreams load in the
// background, fail and come back, announce list_changed): so the set is
// compiled again whenever the tools of the other sources change, and when
// a pipeline file changes (a stat poll of the folders) or the config is
// reloaded. A pipeline that names a tool not (yet) in the catalog is held
// back, with its error in Status, until the tool appears. When the tool's
// namespace is a configured server's that is starting or failed, the error
// names that server and its state instead (pendingTool), and is checked
// again with the folders, so that it follows the server's state.

// pipelinesSourceID is the catalog source and Status name of the pipelines.
const pipelinesSourceID = "pipelines"

// pipelinesNamespace prefixes the pipelines' tool names.
const pipelinesNamespace = "pipelines"

// pipelinePoll is how often the pipeline folders are checked for changes.
var pipelinePoll = time.Second

// pipelineSet is the gateway's pipelines: what is served, the runner with
// its run history, and what the set was last compiled from.
type pipelineSet struct {
	g      *Gateway
	runner pipelines.Runner

	// loadMu serializes compiling and publishing, and the management
	// tools' validate-write-reload sequences.
	loadMu sync.Mutex

	mu       sync.Mutex
	byName   map[string]*pipelines.Pipeline
	list     []*pipelines.Pipeline
	problems []*pipelines.Error
	defs     []json.RawMessage
	toolsSig string // the other sources' tool names last compiled against
	stamp    string // the pipeline files last compiled
	// pending is, for each step tool last compiled as waiting on its
	// server (pendingTool), why: a change of it compiles them again.
	pending map[string]string
}

func newPipelineSet(g *Gateway) *pipelineSet {
	ps := &pipelineSet{g: g, byName: map[string]*pipelines.Pipeline{}}
	ps.runner.Prepare = g.ensurePipelineServices
	return ps
}

// ensurePipelineServices starts the services p requires and waits until
// they are healthy (pipelines.Runner.Prepare), saying which it waits for
// and in what state each is, through wait and the log.
func (g *Gateway) ensurePipelineServices(ctx context.Context, p *pipelines.Pipeline, wait func(string)) error {
	if len(p.Requires) == 0 {
		return nil
	}
	if m := g.svcs(); m != nil {
		for _, name := range p.Requires {
			st, ok := m.Cached(name)
			if !ok || st.Ready() {
				continue
			}
			state := st.State
			if state == "" {
				state = "not started"
			}
			msg := fmt.Sprintf("waiting for service %s (%s)", name, state)
			wait(msg)
			g.log.Info("pipeline waits for a service", "pipeline", p.Name, "service", name, "state", state)
		}
	}
	if _, err := g.EnsureServices(ctx, p.Requires...); err != nil {
		return fmt.Errorf("requires %s: %w", strings.Join(p.Requires, ", "), err)
	}
	return nil
}

// pipelinesConfigured reports whether cfg has any pipeline to serve.
func pipelinesConfigured(cfg *config.Config) bool {
	return len(cfg.Pipelines.Dirs) > 0 || cfg.Pipelines.Inline != nil
}

// PipelineLoader returns a Loader compiling cfg's pipelines as the gateway
// does: names pipelines__<name> (with cfg's separator), the environment
// cfg allows, cfg's inline pipelines. tools checks step tool names; nil
// accepts every name. A requires naming a service cfg lacks is a
// problem. Load it with cfg.Pipelines.Dirs.
func PipelineLoader(cfg *config.Config, tools func(string) bool) *pipelines.Loader {
	sep := cfg.Names.Separator
	if sep == "" {
		sep = catalog.DefaultSeparator
	}
	// Every allowed variable is known to expressions, set or not: one
	// that is not set reads as "", so unsetting it cannot break a load.
	env := map[string]string{}
	for _, k := range cfg.Pipelines.Env {
		env[k] = os.Getenv(k)
	}
	svcs := slices.Sorted(maps.Keys(cfg.Services))
	return &pipelines.Loader{
		Tools:      tools,
		Services:   func() []string { return svcs },
		ToolName:   func(name string) string { return catalog.ExposedName(pipelinesNamespace, sep, name) },
		Env:        env,
		Inline:     cfg.Pipelines.Inline,
		InlineFile: cfg.Source,
	}
}

// PipelineProblems splits an error of Loader.Load or Parse into its
// problems, each with its position.
func PipelineProblems(err error) []*pipelines.Error {
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]*pipelines.Error, 0, len(errs))
	for _, e := range errs {
		var pe *pipelines.Error
		if !errors.As(e, &pe) {
			pe = &pipelines.Error{Msg: e.Error()}
		}
		out = append(out, pe)
	}
	return out
}

// catalogTools returns a check of tool names against snap, leaving out the
// pipelines' own tools: pipelines know each other from their batch, and a
// pipeline that was deleted must not be found in the old catalog.
func catalogTools(snap *catalog.Snapshot) func(string) bool {
	return func(name string) bool {
		it, ok := snap.Tool(name)
		return ok && it.Source != pipelinesSourceID
	}
}

// PipelineToolSchema returns the input schema of the tools of snap that
// are not pipelines, for Loader.ToolSchema: a step's arguments are checked
// against it, and what does not fit is a warning.
func PipelineToolSchema(snap *catalog.Snapshot) func(string) json.RawMessage {
	return func(name string) json.RawMessage {
		it, ok := snap.Tool(name)
		if !ok || it.Source == pipelinesSourceID {
			return nil
		}
		var def struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(it.Raw, &def) != nil {
			return nil
		}
		return def.InputSchema
	}
}

// catalogToolNames lists the tools catalogTools finds in snap, for the
// loader's suggestions.
func catalogToolNames(snap *catalog.Snapshot) func() []string {
	return func() []string {
		var out []string
		for _, it := range snap.Tools() {
			if it.Source != pipelinesSourceID {
				out = append(out, it.Name)
			}
		}
		return out
	}
}

// toolsSignature identifies the tools of every source but the pipelines
// (the config's and the skills'), names and definitions, so a change of
// the pipelines alone triggers no recompile, and a changed input schema
// (which steps' arguments are checked against) does.
func toolsSignature(snap *catalog.Snapshot) string {
	h := sha256.New()
	for _, it := range snap.Tools() {
		if it.Source != pipelinesSourceID && !strings.HasPrefix(it.Source, skillPipelinesPrefix) {
			h.Write([]byte(it.Name))
			h.Write([]byte{0})
			h.Write(it.Raw)
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// filesStamp identifies the pipeline files of dirs by name, size and
// modification time; a change of any means the set must be compiled again.
func filesStamp(dirs []string) string {
	var b strings.Builder
	for _, dir := range dirs {
		b.WriteString(dir)
		b.WriteByte('\n')
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.WriteString("error: " + err.Error() + "\n")
			continue
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// startPipelines compiles and serves the pipelines of the current config,
// then keeps them current: when a file changes and when the other sources'
// tools change. The watchers end with the gateway.
func (g *Gateway) startPipelines(ctx context.Context) {
	ps := g.pipes
	ps.reload(ctx)
	g.mu.Lock()
	if g.closed || g.execs.runCtx == nil {
		g.mu.Unlock()
		return
	}
	runCtx := g.execs.runCtx
	g.wg.Add(1)
	g.mu.Unlock()
	snaps, unsubscribe := g.store.Subscribe()
	go func() {
		defer g.wg.Done()
		defer unsubscribe()
		tick := time.NewTicker(pipelinePoll)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case snap := <-snaps:
				ps.mu.Lock()
				changed := toolsSignature(snap) != ps.toolsSig
				ps.mu.Unlock()
				if changed {
					ps.reload(runCtx)
				}
				g.refreshSkillPipelines(runCtx) // skill_pipelines.go
			case <-tick.C:
				g.mu.Lock()
				dirs := g.cfg.Pipelines.Dirs
				g.mu.Unlock()
				ps.mu.Lock()
				changed := filesStamp(dirs) != ps.stamp
				pending := ps.pending
				ps.mu.Unlock()
				if changed || g.pendingChanged(pending) {
					ps.reload(runCtx)
				}
				g.refreshSkillPipelines(runCtx)
			}
		}
	}()
}

// settle returns once the pipelines are compiled against the catalog as
// it is now, and published: a compile in progress is waited for, and one
// that saw other tools than the catalog has now (a server that became
// ready while it ran, whose update the watcher has not taken yet) or
// servers in another state is done again. The end of Start calls it, so
// that a one-shot command finds in Pipelines what the catalog serves.
func (ps *pipelineSet) settle(ctx context.Context) {
	g := ps.g
	ps.loadMu.Lock()
	defer ps.loadMu.Unlock()
	g.mu.Lock()
	cfg := g.cfg
	g.mu.Unlock()
	if !pipelinesConfigured(cfg) {
		return
	}
	// A source that keeps changing its tools would keep this busy: a
	// few rounds, then what is there.
	for range 3 {
		ps.mu.Lock()
		sig, pending := ps.toolsSig, ps.pending
		ps.mu.Unlock()
		if ctx.Err() != nil || (toolsSignature(g.store.Load()) == sig && !g.pendingChanged(pending)) {
			return
		}
		ps.reloadLocked(ctx)
	}
}

// reload compiles the pipelines of the current config against the current
// catalog and publishes what changed.
func (ps *pipelineSet) reload(ctx context.Context) {
	ps.loadMu.Lock()
	defer ps.loadMu.Unlock()
	ps.reloadLocked(ctx)
}

// reloadLocked is reload with ps.loadMu held.
func (ps *pipelineSet) reloadLocked(ctx context.Context) {
	g := ps.g
	g.mu.Lock()
	cfg := g.cfg
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return
	}
	if !pipelinesConfigured(cfg) {
		ps.unserve(ctx)
		return
	}
	snap := g.store.Load()
	sig := toolsSignature(snap)
	stamp := filesStamp(cfg.Pipelines.Dirs)
	l := PipelineLoader(cfg, catalogTools(snap))
	l.ToolNames = catalogToolNames(snap)
	l.ToolSchema = PipelineToolSchema(snap)
	pending := map[string]string{}
	l.ToolPending = func(name string) string {
		why := g.pendingTool(name)
		if why != "" {
			pending[name] = why
		}
		return why
	}
	ps.mu.Lock()
	served := make(map[string]string, len(ps.byName))
	for name, p := range ps.byName {
		served[name] = p.Pos.File
	}
	ps.mu.Unlock()
	// A second definition of a served name must not take its place.
	l.Served = func(name string) string { return served[name] }
	list, err := l.Load(cfg.Pipelines.Dirs...)
	problems := PipelineProblems(err)
	warnings := pipelineWarnings(list)
	defs := make([]json.RawMessage, len(list))
	byName := make(map[string]*pipelines.Pipeline, len(list))
	for i, p := range list {
		defs[i] = p.Tool()
		byName[p.Name] = p
	}
	sameErrs := func(a, b []*pipelines.Error) bool {
		return slices.EqualFunc(a, b, func(a, b *pipelines.Error) bool { return a.Error() == b.Error() })
	}
	ps.mu.Lock()
	same := slices.EqualFunc(defs, ps.defs, func(a, b json.RawMessage) bool { return string(a) == string(b) })
	sameProblems := sameErrs(problems, ps.problems)
	sameWarnings := sameErrs(warnings, pipelineWarnings(ps.list))
	ps.list, ps.byName, ps.problems, ps.defs = list, byName, problems, defs
	ps.toolsSig, ps.stamp, ps.pending = sig, stamp, pending
	ps.mu.Unlock()

	s := ps.source()
	published := s.pipelinesLoaded(len(list), append(slices.Clip(problems), warnings...))
	if !same || !published {
		g.publish(s, sdk.Definitions{Tools: defs})
	}
	// Told once per change: a recompile because other sources' tools
	// changed finds the same problems again.
	switch {
	case len(problems) > 0 && (!sameProblems || !same) && onlyStarting(problems):
		// Not a problem yet: they are served once their servers are.
		g.log.Info("pipelines wait for servers still starting", "served", len(list), "steps_waiting", len(problems), "first", problems[0].Error())
	case len(problems) > 0 && (!sameProblems || !same):
		g.log.Warn("pipelines with problems are not served", "served", len(list), "problems", len(problems), "first", problems[0].Error())
	case len(problems) == 0 && !same:
		g.log.Info("pipelines loaded", "served", len(list))
	}
	if len(warnings) > 0 && !sameWarnings {
		g.log.Warn("pipelines are served with warnings", "warnings", len(warnings), "first", warnings[0].Error())
	}
}

// pendingTool says why tool name, which the catalog lacks, may still
// come: its namespace is that of a server of the config that is not ready
// ("server notes is failed: <its last error>", "server notes is
// starting"). It is "" for any other name, and for a ready server's, whose
// tools are all in the catalog.
func (g *Gateway) pendingTool(name string) string {
	st, ok := g.ownerNotReady(name, true)
	if !ok {
		return ""
	}
	return fmt.Sprintf("server %s is %s", st.Name, stateWhy(st))
}

// pendingChanged reports whether a tool of pending (tool -> why, as
// pendingTool said at the last compile) waits for another reason now, or
// no longer: the pipelines calling it must be compiled again.
// onlyStarting reports whether every problem is a step's tool whose
// server is still starting (see Gateway.pendingTool).
func onlyStarting(problems []*pipelines.Error) bool {
	for _, p := range problems {
		if !strings.HasSuffix(p.Error(), " is starting") {
			return false
		}
	}
	return true
}

func (g *Gateway) pendingChanged(pending map[string]string) bool {
	for tool, why := range pending {
		if g.pendingTool(tool) != why {
			return true
		}
	}
	return false
}

// PendingTool says why tool name, which the catalog lacks, may still come
// ("server notes is failed: <its last error>", "server notes is
// starting"), or "" (see pipelines.Loader.ToolPending): for the CLI's
// checks of pipelines, so they say what the gateway's do.
func (g *Gateway) PendingTool(name string) string { return g.pendingTool(name) }

// heldBackPipeline says why tool name, a pipeline's, is not served: its
// own problems from the last compile ("pipeline "report" has problems and
// is not served: file:line: ..."), or "" when none is about it. A skill's
// pipeline is told by heldBackSkillPipeline.
func (g *Gateway) heldBackPipeline(name string) string {
	g.mu.Lock()
	cfg := g.cfg
	g.mu.Unlock()
	_, problems := g.pipes.snapshot()
	l := PipelineLoader(cfg, nil)
	var pipeline string
	var own []*pipelines.Error
	for _, p := range problems {
		if p.Warning || p.Pipeline == "" || l.ToolName(p.Pipeline) != name {
			continue
		}
		pipeline = p.Pipeline
		own = append(own, p)
	}
	if len(own) == 0 {
		return g.heldBackSkillPipeline(name)
	}
	msg := fmt.Sprintf("pipeline %q has problems and is not served: %s", pipeline, oneline.Cut(own[0].Error(), 300))
	switch len(own) {
	case 1:
	case 2:
		msg += " (and 1 more problem)"
	default:
		msg += fmt.Sprintf(" (and %d more problems)", len(own)-1)
	}
	return msg + "; `skillgate pipeline validate --all` lists them"
}

// pipelineWarnings returns the warnings of the pipelines of list.
func pipelineWarnings(list []*pipelines.Pipeline) []*pipelines.Error {
	var out []*pipelines.Error
	for _, p := range list {
		out = append(out, p.Warnings...)
	}
	return out
}

// pipelinesLoaded records in s's status that a pipelines folder loaded
// with n pipelines served and problems (which make the state "invalid", as
// for tool folders: the good pipelines are served and /readyz does not fail
// over a typo). Problems that are warnings are listed too, but leave the
// state alone. It reports whether s was published before.
func (s *source) pipelinesLoaded(n int, problems []*pipelines.Error) (published bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	published = s.loaded
	s.loaded = true
	s.st.Tools = n
	s.st.Problems = nil
	var errs []*pipelines.Error
	for _, p := range problems {
		s.st.Problems = append(s.st.Problems, p.Error())
		if !p.Warning {
			errs = append(errs, p)
		}
	}
	state, last := "ready", ""
	if len(errs) > 0 {
		state, last = stateInvalid, errs[0].Error()
		switch len(errs) {
		case 1:
		case 2:
			last += " (and 1 more problem)"
		default:
			last += fmt.Sprintf(" (and %d more problems)", len(errs)-1)
		}
	}
	if s.st.State != state {
		s.st.Since = time.Now()
	}
	s.st.State, s.st.LastError = state, last
	return published
}

// source returns the pipelines' source, registering it on first use.
func (ps *pipelineSet) source() *source {
	g := ps.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sources[pipelinesSourceID]; s != nil {
		return s
	}
	s := &source{
		id: pipelinesSourceID, execName: "pipelines", namespace: pipelinesNamespace,
		order: 1 << 19, kind: "pipelines",
		// A pipeline is bounded by its own timeout and each call by the
		// request timeout; the whole run only by the hard maximum.
		timeout: time.Duration(g.cfg.Limits.MaxRequestTimeout),
		st:      SourceStatus{Name: pipelinesSourceID, Executor: "pipelines", State: "starting", Since: time.Now()},
	}
	s.setExecutor(pipelinesExec{ps})
	g.putSource(s)
	return s
}

// unserve removes the pipelines' source when the config has none.
func (ps *pipelineSet) unserve(ctx context.Context) {
	g := ps.g
	g.mu.Lock()
	s := g.sources[pipelinesSourceID]
	g.dropSource(pipelinesSourceID)
	g.mu.Unlock()
	ps.mu.Lock()
	ps.list, ps.byName, ps.problems, ps.defs, ps.stamp = nil, map[string]*pipelines.Pipeline{}, nil, nil, ""
	ps.mu.Unlock()
	if s != nil {
		s.stop(ctx)
		g.removeSource(s.id)
	}
}

// snapshot returns the pipelines served and the problems of the last load.
func (ps *pipelineSet) snapshot() ([]*pipelines.Pipeline, []*pipelines.Error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.list, ps.problems
}

func (ps *pipelineSet) lookup(name string) *pipelines.Pipeline {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.byName[name]
}

// Pipelines returns the pipelines being served and the problems of the
// files and inline pipelines that are not, each with its position.
func (g *Gateway) Pipelines() ([]*pipelines.Pipeline, []*pipelines.Error) {
	return g.pipes.snapshot()
}

// PipelineRuns returns the records of the latest pipeline runs, newest
// first, running ones included.
func (g *Gateway) PipelineRuns() []pipelines.Record { return g.pipes.runner.Runs() }

// PipelineRun returns the record of one run, while it is kept.
func (g *Gateway) PipelineRun(id string) (pipelines.Record, bool) { return g.pipes.runner.Record(id) }

// ReloadPipelines compiles the pipelines again now, without waiting for
// the folder poll.
func (g *Gateway) ReloadPipelines(ctx context.Context) { g.pipes.reload(ctx) }

// pipelinesExec runs pipelines in process.
type pipelinesExec struct{ ps *pipelineSet }

var _ sdk.Executor = pipelinesExec{}

func (e pipelinesExec) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "pipelines", Version: e.ps.g.opts.Version, Kinds: []string{"pipelines"}}, nil
}

func (e pipelinesExec) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Source != pipelinesSourceID {
		return sdk.Definitions{}, fmt.Errorf("%w: %s", sdk.ErrUnknownSource, req.Source)
	}
	e.ps.mu.Lock()
	defer e.ps.mu.Unlock()
	return sdk.Definitions{Tools: slices.Clone(e.ps.defs)}, nil
}

func (e pipelinesExec) Unload(context.Context, string) error { return nil }

// Call runs one pipeline. Its steps' progress reaches the caller as
// notifications whose progress counts finished steps, with the fraction
// done of those running, of the total (see runProgress).
func (e pipelinesExec) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	name, args, err := pipelineCall(req)
	if err != nil {
		return nil, err
	}
	p := e.ps.lookup(name)
	if p == nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("no pipeline %q is loaded (it was removed or has problems; see `skillgate servers`)", name)}
	}
	return e.ps.run(ctx, p, args, call)
}

// pipelineCall reads the tool name and arguments of a call to a pipeline
// executor (the pipelines dirs' or a skill's).
func pipelineCall(req sdk.CallRequest) (string, json.RawMessage, error) {
	if req.Method != "tools/call" {
		return "", nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by pipelines"}
	}
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil {
		return "", nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	return params.Name, params.Arguments, nil
}

// run runs one pipeline of any source (the config's or a skill's) on the
// shared runner, so every run is in one history.
func (ps *pipelineSet) run(ctx context.Context, p *pipelines.Pipeline, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if call == nil {
		call = nopCall{}
	}
	res, err := ps.runner.Run(ctx, p, args, stepCaller{g: ps.g, call: call}, pipelineProgress(ctx, p, call))
	var ce *pipelines.ChainError
	if errors.As(err, &ce) {
		return toolError(ce.Error()), nil
	}
	return res, err
}

// pipelineProgress returns the progress function of a run of p for the
// call made with ctx: each event becomes a notification of call (see
// runProgress), until ctx is done: a caller that canceled wants nothing
// more about the run it gave up.
func pipelineProgress(ctx context.Context, p *pipelines.Pipeline, call sdk.Call) func(pipelines.Progress) {
	meter := newRunProgress(p)
	return func(pr pipelines.Progress) { // the Runner reports one event at a time
		if ctx.Err() != nil {
			return
		}
		if v, ok := meter.next(pr); ok {
			_ = call.Progress(sdk.Progress{Progress: v, Total: float64(pr.Total), Message: pr.Pipeline + " " + pr.String()})
		}
	}
}

// runProgress turns the events of one run into the progress of the
// pipeline's call: the steps finished plus, for each step running, the
// fraction it has done when its tool says (progress of a total) or, for a
// for_each, its items finished. It never goes back; an event that moves
// nothing still moves the value a hundredth of the way to what the steps
// running can reach, since MCP wants every notification's progress above
// the last one's. Fallback steps count as part of the step they stand in
// for, which their events do not name, so they move nothing themselves.
type runProgress struct {
	p     *pipelines.Pipeline
	last  float64
	steps map[string]*stepShare
}

// stepShare is what one running step has done.
type stepShare struct {
	frac      float64         // without for_each: the tool's progress/total
	items     int             // with for_each: the items, and
	itemsDone int             // those finished (or failed), and
	item      map[int]float64 // the fraction of each one running
}

func newRunProgress(p *pipelines.Pipeline) *runProgress {
	return &runProgress{p: p, last: -1, steps: map[string]*stepShare{}}
}

// fraction is how much of its step sh has done, short of all of it.
func (sh *stepShare) fraction() float64 {
	f := sh.frac
	if sh.items > 0 {
		sum := float64(sh.itemsDone)
		for _, v := range sh.item {
			sum += v
		}
		f = sum / float64(sh.items)
	}
	return min(max(f, 0), 0.999)
}

// next takes the run's next event and returns the progress to report, or
// false when there is none above the last one.
func (rp *runProgress) next(pr pipelines.Progress) (float64, bool) {
	if s := rp.p.Step(pr.Step); s != nil && !s.Fallback {
		sh := rp.steps[pr.Step]
		if sh == nil {
			sh = &stepShare{item: map[int]float64{}}
			rp.steps[pr.Step] = sh
		}
		if pr.Item > 0 {
			sh.items = pr.Items
		}
		switch {
		case pr.Event == "progress" && pr.StepTotal > 0:
			f := min(pr.StepProgress/pr.StepTotal, 1)
			if pr.Item > 0 {
				sh.item[pr.Item] = max(sh.item[pr.Item], f)
			} else {
				sh.frac = max(sh.frac, f)
			}
		case pr.Item > 0 && pr.Event != "progress" && pr.Event != "retrying":
			sh.itemsDone++ // an item finished or failed
			delete(sh.item, pr.Item)
		case pr.Item == 0 && pr.Event != "progress" && pr.Event != "retrying" && pr.Event != "started":
			delete(rp.steps, pr.Step) // the step settled: Done counts it
		}
	}
	v := float64(pr.Done)
	for _, sh := range rp.steps {
		v += sh.fraction()
	}
	total := float64(pr.Total)
	v = min(v, total)
	if v <= rp.last {
		reach := min(float64(pr.Done+len(rp.steps)), total)
		if reach <= rp.last {
			reach = total
		}
		v = rp.last + (reach-rp.last)/100
	}
	if v <= rp.last || v > total {
		return 0, false
	}
	rp.last = v
	return v, true
}

// stepCaller is the Caller of pipeline runs: a step's call goes through the
// router like any tool call. The Runner has already put the tool on the
// call chain.
type stepCaller struct {
	g    *Gateway
	call sdk.Call
}

// CallTool calls a step's tool. The progress the tool reports goes to the
// Runner, which passes it on to the pipeline's caller as the step's. A
// tool the catalog lacks (it went away since the pipeline loaded) fails
// as Gateway.CallTool's do: a JSON-RPC invalid-params error that matches
// frontend.ErrUnknownTool and says why when its server is down.
func (c stepCaller) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	it, ok := c.g.store.Load().Tool(name)
	if !ok {
		return nil, c.g.unknownTool(name)
	}
	params, err := json.Marshal(map[string]any{"name": it.Original, "arguments": args})
	if err != nil {
		return nil, err
	}
	return router{c.g}.dispatch(ctx, it, "tools/call", params, stepCall{Call: c.call, report: pipelines.StepProgress(ctx)})
}

// unknownTool is the error of a call of tool name, which the catalog
// lacks: what Gateway.CallTool returns for it.
func (g *Gateway) unknownTool(name string) error {
	msg := fmt.Sprintf("%v: %s (see `skillgate tools list`)", frontend.ErrUnknownTool, name)
	if hint := g.unknownToolHint(name); hint != "" {
		msg = fmt.Sprintf("%v: %s: %s", frontend.ErrUnknownTool, name, hint)
	} else if d := g.disclosure(); d != nil {
		if sugg := d.SimilarTools(g.store.Load(), name); len(sugg) > 0 {
			msg = fmt.Sprintf("%v: %s; did you mean %s? (see `skillgate tools list`)", frontend.ErrUnknownTool, name, strings.Join(sugg, ", "))
		}
	}
	return &unknownToolError{&sdk.RPCError{Code: sdk.CodeInvalidParams, Message: msg}}
}

// stepCall is the sdk.Call of a step's tool: its progress is reported to
// the Runner (the client's token belongs to the pipeline's call), while
// notifications and requests still reach the client.
type stepCall struct {
	sdk.Call
	report func(progress, total float64, message string)
}

func (c stepCall) Progress(p sdk.Progress) error {
	c.report(p.Progress, p.Total, p.Message)
	return nil
}

// enterTool puts tool on ctx's call chain, or returns the isError result
// that refuses the call: it is already on the chain, or the chain is too
// deep. Every tools/call the router serves passes here, so the guard spans
// clients, pipelines and executors calling back (scripts).
func (g *Gateway) enterTool(ctx context.Context, tool string) (context.Context, json.RawMessage) {
	ctx, err := pipelines.Enter(ctx, tool, g.pipes.runner.MaxDepth)
	if err != nil {
		return ctx, toolError(g.chainRefusal(err))
	}
	return ctx, nil
}

// chainCall carries the call chain of a dispatched call into the
// executor's callbacks: an out-of-process executor's CallTool arrives on a
// fresh context, and must still count as nested in the call that made it.
type chainCall struct {
	sdk.Call
	g     *Gateway
	chain []string
	// outer is the dispatched call's context: callbacks end with it.
	outer context.Context
}

// withChain wraps call so its CallTool callbacks carry ctx's chain.
func (g *Gateway) withChain(ctx context.Context, call sdk.Call) sdk.Call {
	if call == nil {
		call = nopCall{}
	}
	return &chainCall{Call: call, g: g, chain: pipelines.CallChain(ctx), outer: ctx}
}

// CallTool implements sdk.Call: the nested call goes through the router
// with the chain, so a tool calling itself through others is refused.
func (c *chainCall) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := context.WithCancel(frontend.WithClientOf(pipelines.WithCallChain(ctx, c.chain), c.outer))
	defer cancel()
	stop := context.AfterFunc(c.outer, cancel)
	defer stop()
	return c.g.callTool(ctx, name, args, nestedCall{c.Call}) // with the Origin of c.outer's client, or none
}

// nestedCall is the sdk.Call of a tool called by another tool: its
// progress is not the client's (whose token belongs to the outer call),
// while notifications and requests still reach the client.
type nestedCall struct{ sdk.Call }

func (nestedCall) Progress(sdk.Progress) error { return nil }

// nopCall is the sdk.Call of a call without a client.
type nopCall struct{}

func (nopCall) Progress(sdk.Progress) error   { return nil }
func (nopCall) Notify(sdk.Notification) error { return nil }
func (nopCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "no client to ask"}
}
func (nopCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

// toolError is an isError CallToolResult with msg as its text.
func toolError(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": msg}},
		"isError": true,
	})
	return b
}
