package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills"
	"github.com/skillgate/skillgate/skills/gitsource"
	"github.com/skillgate/skillgate/skills/shape"
)

// Skills: the folders of cfg.Skills.Dirs and the git repositories of
// cfg.Skills.Repos (skills/gitsource) are one skills.Library, served by
// an in-process skills.Server as the source "gateway:skills" without a
// namespace: the meta-tools find_skills, load_skill, read_skill_file,
// run_skill_script and read_artifact, a prompt per skill and skill://
// resources. Skill scripts and hooks run on the script executor. A skill's
// tools/ folders are sources of their own whose catalog items carry the
// skill (activate skill:NAME shows them). The library refreshes itself
// (watcher + periodic stat) and every change is published again.
//
// Global hooks come from cfg.Skills.HooksDirs and each skills dir's "_hooks"
// folder (the library looks for those on every rescan); results are shaped to the share of the client's context window
// the config gives. A reload applies dirs, hooks, budget and repos; turning
// skills on or off needs a restart (the meta-tools and the extension are
// announced at start).

const (
	// skillsSourceID is the catalog source of the skills meta-tools.
	skillsSourceID = "gateway:skills"
	// skillToolPrefix starts the source ID of a skill's tool folder.
	skillToolPrefix = "skill-tool:"
	// skillsOrder places the skills tools before servers on collisions.
	skillsOrder = -1
	// skillToolOrder places skills' own tools after tool folders.
	skillToolOrder = 1 << 17
)

// DefaultSkillsBudget is the bytes one skill result may take: a tenth of a
// 200,000-token context window.
var DefaultSkillsBudget = shape.Budget(200_000, shape.DefaultShare)

// SkillsBudget is the bytes one skill result may take under cfg: the
// share of the client's context window cfg gives (SKILLGATE_OUTPUT_BUDGET).
func SkillsBudget(cfg *config.Config) int {
	if cfg.Skills.ContextWindow <= 0 {
		return DefaultSkillsBudget
	}
	return shape.Budget(cfg.Skills.ContextWindow, cfg.Skills.ResultShare)
}

// SkillReposDirFor is the folder of the skill repositories of cfg, under
// SkillReposDir: one per config file (by its absolute path; "builtin" for
// the built-in default). Gateways of different configs on one machine
// never touch each other's repositories; gateways of one config (an HTTP
// one and a --stdio one, replicas) share theirs, taking turns through
// skills/gitsource's locks.
func SkillReposDirFor(cfg *config.Config) string {
	src := cfg.Source
	if src == "" || strings.HasPrefix(src, "<") {
		name := strings.Trim(src, "<>")
		if name == "" {
			name = "builtin"
		}
		return filepath.Join(SkillReposDir(), name)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		abs = src
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	base := strings.Trim(unsafeRepoKey.ReplaceAllString(filepath.Base(abs), "_"), "_")
	return filepath.Join(SkillReposDir(), base+"-"+hex.EncodeToString(sum[:6]))
}

var unsafeRepoKey = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// SkillsEnvRule is which variables of the gateway's environment skills
// may ask for under cfg: those skills.env_allow names, besides those
// whose names do not look like credentials, and never a variable that
// holds one of auth.tokens (or a part of one, 8 characters or more)
// unless skills.env_allow names it exactly.
func SkillsEnvRule(cfg *config.Config) skills.EnvRule {
	return skills.EnvRule{Allow: slices.Clone(cfg.Skills.EnvAllow), Deny: tokenVars(cfg.Auth.Tokens, os.Environ())}
}

// SkillsSandboxRule is which skills run under the sandbox whatever they
// say under cfg: every skill (skills.sandbox: required), every skill of a
// git repository (repos), or those of the repositories whose entry says
// sandbox: required.
func SkillsSandboxRule(cfg *config.Config) skills.SandboxRule {
	r := skills.SandboxRule{All: cfg.Skills.Sandbox == config.SandboxRequired, Repos: cfg.Skills.Sandbox == config.SandboxRepos}
	for _, repo := range cfg.Skills.Repos {
		if repo != nil && repo.Sandbox == config.SandboxRequired {
			r.URLs = append(r.URLs, repoURL(repo.URL))
		}
	}
	return r
}

// repoURL is the URL a repository of the config is checked out from: a
// relative local path made absolute (see syncRepos).
func repoURL(url string) string {
	if config.LocalRepo(url) && !filepath.IsAbs(url) {
		if abs, err := filepath.Abs(url); err == nil {
			return abs
		}
	}
	return url
}

// minTokenPart is the shortest value tokenVars takes for a part of a
// token ("Bearer-${PART}"); shorter ones match too much by chance.
const minTokenPart = 8

// tokenVars names the variables of environ (KEY=value entries) whose
// value is one of tokens or a part of one: those an auth token comes
// from.
func tokenVars(tokens, environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		for _, t := range tokens {
			if t == v || len(v) >= minTokenPart && strings.Contains(t, v) {
				out = append(out, k)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// skillsRoom is the gateway's skills state.
type skillsRoom struct {
	lib *skills.Library
	srv *skills.Server
	src *source

	mu       sync.Mutex
	tools    map[string]*source // skill tool sources by ID
	dirs     []string           // the config's skills dirs being served
	repos    *gitsource.Manager // nil when repoErr says why (repoManager)
	repoErr  error              // why repos is nil
	repoErrs map[string]string  // config repositories that failed, by name
	// profileKey is the profiles' skill names resolved to IDs that the
	// disclosure rules were last given (applyProfileSkills).
	profileKey string

	// syncMu makes the start's and a reload's syncRepos take turns.
	syncMu sync.Mutex

	pipeLoad sync.Mutex             // one refresh of the skills' pipelines at a time
	pipeMu   sync.Mutex             // guards pipes and their byName
	pipes    map[string]*skillPipes // by skill ID (skill_pipelines.go)
}

// skillsPinned are the tools listed on the default endpoint in progressive
// mode when the config has skills.
func skillsPinned(cfg *config.Config) []string {
	if !cfg.Skills.Configured() {
		return nil
	}
	return []string{skills.ToolFind, skills.ToolLoad, skills.ToolReadFile, skills.ToolRun, skills.ToolReadArtifact}
}

// profileSkillsTools are served and pinned on a profile that names
// skills: without them its skills' prompts and resources would be all a
// client could reach.
var profileSkillsTools = []string{skills.ToolFind, skills.ToolLoad, skills.ToolReadFile, skills.ToolRun, skills.ToolReadArtifact}

// lazyExec is a built-in executor started on first use.
type lazyExec struct {
	g         *Gateway
	name      string
	inprocess bool
}

func (l lazyExec) get(ctx context.Context) (sdk.Executor, error) {
	ex, _, err := l.g.execs.get(ctx, l.name, l.inprocess)
	return ex, err
}

func (l lazyExec) Info(ctx context.Context) (sdk.Info, error) {
	ex, err := l.get(ctx)
	if err != nil {
		return sdk.Info{}, err
	}
	return ex.Info(ctx)
}

func (l lazyExec) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	ex, err := l.get(ctx)
	if err != nil {
		return sdk.Definitions{}, err
	}
	return ex.Load(ctx, req)
}

func (l lazyExec) Unload(ctx context.Context, source string) error {
	ex, err := l.get(ctx)
	if err != nil {
		return err
	}
	return ex.Unload(ctx, source)
}

func (l lazyExec) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	ex, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return ex.Call(ctx, req, call)
}

func (g *Gateway) isolation(exec string) bool {
	if ex := g.cfg.Executors[exec]; ex != nil {
		return ex.Isolation == "inprocess"
	}
	return false
}

// startSkills serves the skills of cfg and keeps them current until the
// gateway closes. Without skills in cfg it does nothing.
func (g *Gateway) startSkills(ctx context.Context, cfg *config.Config) {
	if !cfg.Skills.Configured() {
		return
	}
	room := &skillsRoom{tools: map[string]*source{}, pipes: map[string]*skillPipes{}, dirs: slices.Clone(cfg.Skills.Dirs), repoErrs: map[string]string{},
		repoErr: errReposLoading}
	opts := SkillsOptions(cfg)
	opts.Logger = g.log.With("room", "skills")
	opts.Executor = lazyExec{g: g, name: "script", inprocess: g.isolation("script")}
	opts.Artifacts = shape.NewStore(0, 0)
	opts.OnChange = func(*skills.Snapshot) { g.skillsChanged(room) }
	room.lib = skills.New(opts)
	room.srv = skills.NewServer(room.lib)
	room.srv.Scope(g.profileSeesSkill, frontend.ProfileOf)
	room.srv.OnResourceUpdated(func(uri string) {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		g.fe.Notify("notifications/resources/updated", params)
	})
	room.src = &source{
		id: skillsSourceID, execName: "gateway", namespace: "", order: skillsOrder,
		kind: "skills", internal: true,
		st: SourceStatus{Name: skillsSourceID, Executor: "gateway", State: "starting", Since: time.Now()},
	}
	room.src.setExecutor(room.srv)
	g.mu.Lock()
	g.skills = room
	g.putSource(room.src)
	g.mu.Unlock()
	if _, err := room.lib.Refresh(ctx); err != nil {
		g.log.Error("skills not served", "err", err)
		room.mu.Lock()
		room.repoErr = fmt.Errorf("skills are not served: %w", err)
		room.mu.Unlock()
		return
	}
	room.src.loaded = true
	room.src.setState("ready", "")
	g.skillsChanged(room)
	repos, err := gitsource.New(ctx, SkillReposDirFor(cfg), room.lib)
	if err != nil {
		g.log.Error("skill repositories not served", "err", err)
	}
	room.mu.Lock()
	room.repos, room.repoErr = repos, err
	room.mu.Unlock()
	g.syncRepos(ctx, room, cfg.Skills.Repos)
	snap := room.lib.Snapshot()
	for _, p := range append(snap.Check(cfg.ServerOrder, mapKeys(cfg.Services)), skills.EntryProblems(snap)...) {
		g.log.Warn("skill", "problem", p.String())
	}
	g.mu.Lock()
	if g.closed || g.execs.runCtx == nil {
		g.mu.Unlock()
		return
	}
	runCtx := g.execs.runCtx
	g.wg.Add(2) // the library and the subscriptions
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		room.srv.WatchSubscriptions(runCtx, skills.DefaultInterval)
	}()
	go func() {
		defer g.wg.Done()
		defer room.lib.Close()
		if repos != nil {
			defer repos.Close()
		}
		_ = room.lib.Run(runCtx)
	}()
}

// profileSeesSkill reports whether the endpoint of ctx serves the skill:
// every endpoint unless a profile narrows its prompts and resources to
// servers or skills (its skills: then name the skills it sees). The
// skills server scopes its tools, prompts, resources and skills/list by
// it.
func (g *Gateway) profileSeesSkill(ctx context.Context, id string) bool {
	p := frontend.ProfileOf(ctx)
	if p == "" {
		return true
	}
	return g.disclosure().Serves(disclosure.Request{Profile: p}, &catalog.Item{Kind: catalog.Prompt, Source: skillsSourceID, Skill: id})
}

// union is a followed by the items of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Skills returns the gateway's skills library, or nil without skills.
func (g *Gateway) Skills() *skills.Library {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.skills == nil {
		return nil
	}
	return g.skills.lib
}

// skillsExtensions announces the skills extension when the config has
// skills.
func skillsExtensions(cfg *config.Config) map[string]any {
	if !cfg.Skills.Configured() {
		return nil
	}
	return map[string]any{skills.ExtensionID: map[string]any{}}
}

// skillsMethods serves the skills extension's methods (skills/list,
// skills/get) from the skills source.
func (g *Gateway) skillsMethods() map[string]frontend.Method {
	item := &catalog.Item{Name: "skills", Source: skillsSourceID, Executor: "gateway"}
	serve := func(method string) frontend.Method {
		return func(ctx context.Context, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
			if g.Skills() == nil {
				return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: method + ": this gateway serves no skills (set skills.dirs)"}
			}
			if len(params) == 0 {
				params = json.RawMessage(`{}`)
			}
			return router{g}.Call(ctx, item, method, params, call)
		}
	}
	return map[string]frontend.Method{"skills/list": serve("skills/list"), "skills/get": serve("skills/get")}
}

// skillTargets is disclosure's view of a skill: whether it exists and the
// targets its requires bring on activation.
func (g *Gateway) skillTargets(name string) ([]string, bool) {
	lib := g.Skills()
	if lib == nil {
		return nil, false
	}
	snap := lib.Snapshot()
	a, err := snap.Activation(name)
	if err != nil {
		return nil, false
	}
	// What activation cannot bring is named too, so that activate says
	// so: required skills that are not installed, and services the
	// config lacks (those it has start before a call needs them).
	targets := a.Targets()
	for _, m := range a.Missing {
		targets = append(targets, "skill:"+m)
	}
	g.mu.Lock()
	services := g.cfg.Services
	g.mu.Unlock()
	for _, s := range a.Services {
		if _, ok := services[s]; !ok {
			targets = append(targets, "service:"+s)
		}
	}
	return targets, true
}

// skillsChanged publishes the skills source again and brings the skills'
// tool folders in line with the snapshot.
func (g *Gateway) skillsChanged(room *skillsRoom) {
	room.src.mu.Lock()
	live := room.src.loaded
	room.src.mu.Unlock()
	if !live {
		return
	}
	g.publish(room.src, room.srv.Definitions())
	room.srv.CheckSubscriptions() // a SKILL.md edited, a skill gone

	g.mu.Lock()
	ctx := g.execs.runCtx
	closed := g.closed
	cfg := g.cfg
	g.mu.Unlock()
	if !closed {
		g.applyProfileSkills(room, cfg, false)
	}
	if closed || ctx == nil {
		return
	}
	want := map[string]*source{}
	for i, sk := range room.lib.Snapshot().Skills() {
		for j, dir := range sk.ToolDirs {
			s, err := g.skillToolSource(cfg, room.lib, sk, dir, skillToolOrder+i*64+j)
			if err != nil {
				g.log.Warn("skill tool not served", "skill", sk.ID, "dir", dir, "err", err)
				continue
			}
			want[s.id] = s
		}
	}
	room.mu.Lock()
	var stale, fresh []*source
	for id, cur := range room.tools {
		if n, ok := want[id]; !ok || string(n.spec) != string(cur.spec) {
			stale = append(stale, cur)
			delete(room.tools, id)
		}
	}
	for id, n := range want {
		if _, ok := room.tools[id]; !ok {
			room.tools[id] = n
			fresh = append(fresh, n)
		}
	}
	room.mu.Unlock()
	for _, s := range stale {
		s.stop(ctx)
		g.mu.Lock()
		if g.sources[s.id] == s {
			g.dropSource(s.id)
		}
		g.mu.Unlock()
		g.removeSource(s.id)
	}
	g.startSources(ctx, fresh)
	g.refreshSkillPipelines(ctx)
}

// skillToolSource is the source of one tool folder of a skill: namespaced
// by the skill (team/name written team_name), its items carrying the skill,
// requiring the services its tool.yaml and the skill's requires name (the
// gateway starts them before a call), keeping state where lib says
// (skills.Library.ToolStateDir).
func (g *Gateway) skillToolSource(cfg *config.Config, lib *skills.Library, sk *skills.Skill, dir string, order int) (*source, error) {
	tool, err := toolspec.Load(dir)
	if err != nil {
		return nil, err
	}
	if probs := SkillsEnvRule(cfg).ToolEnvProblems(dir, filepath.Join(dir, toolspec.FileName), tool); len(probs) > 0 {
		return nil, errors.New(probs[0].String()) // CheckSkills reports them all
	}
	if SkillsSandboxRule(cfg).Requires(sk) && tool.Runtime != toolspec.RuntimeWasm {
		tool.Sandbox.Enabled = true
	}
	if ns := skills.Namespace(sk.ID); config.IsReservedNamespace(ns) {
		// The library refuses these already; never let one take the
		// gateway's own names.
		return nil, fmt.Errorf("skill %s: %q is the namespace of the gateway's own tools", sk.ID, ns)
	}
	lim := cfg.Limits
	id := skillToolPrefix + sk.ID + "/" + filepath.Base(dir)
	spec, err := json.Marshal(toolspec.Spec{
		Dir:  dir,
		Tool: *tool,
		Limits: toolspec.Limits{
			Timeout:      toolspec.Duration(lim.RequestTimeout),
			MaxTimeout:   toolspec.Duration(lim.MaxRequestTimeout),
			StallTimeout: toolspec.Duration(lim.StallTimeout),
			OutputCap:    toolspec.ByteSize(lim.ScriptOutputCap),
			Concurrency:  lim.ScriptConcurrency,
		},
		StateDir: lib.ToolStateDir(sk, dir),
	})
	if err != nil {
		return nil, err
	}
	execName := "script"
	if tool.Runtime == toolspec.RuntimeWasm {
		execName = "wasm"
	}
	s := &source{
		id: id, execName: execName, inprocess: g.isolation(execName),
		namespace: strings.ReplaceAll(sk.ID, "/", "_"), order: order, kind: execName, spec: spec,
		skill: sk.ID, requires: union(tool.Requires, sk.Meta.Requires.Services),
		st: SourceStatus{Name: id, Executor: execName, State: "starting", Since: time.Now()},
	}
	if tool.Timeout > 0 {
		s.timeout = tool.Timeout.Std() + 5*time.Second
	}
	return s, nil
}

// repoFetchTimeout bounds fetching one repository of the config.
const repoFetchTimeout = 2 * time.Minute

// syncRepos brings the repositories the config added in line with want:
// an entry already checked out with the same URL, ref and layout is kept
// as it is (no fetch, so a restart works offline), others are fetched
// (and one whose checkout went missing), and config repositories no
// longer in want are removed. Repositories added with the admin tools are
// left alone unless want names them. The repositories are the config
// file's own (SkillReposDirFor): another config's gateway has its own.
func (g *Gateway) syncRepos(ctx context.Context, room *skillsRoom, want []*config.SkillRepo) {
	room.syncMu.Lock()
	defer room.syncMu.Unlock()
	repos, _ := room.repoManager()
	if repos == nil {
		return
	}
	want = slices.Clone(want) // the config's entries stay as they are
	names := map[string]bool{}
	for i, w := range want {
		names[w.Name] = true
		// A local path is kept absolute, so that the same config read
		// from another working folder names the same repository.
		if u := repoURL(w.URL); u != w.URL {
			c := *w
			c.URL = u
			want[i] = &c
		}
	}
	for _, r := range repos.List() {
		if r.Origin == repoFromConfig && !names[r.Name] {
			if err := repos.Remove(ctx, r.Name); err != nil {
				g.log.Warn("skill repository not removed", "repo", r.Name, "err", err)
			}
		}
	}
	errs := map[string]string{}
	for _, w := range want {
		cur, ok := repos.Get(w.Name)
		if ok && cur.URL == w.URL && cur.Ref == w.Ref && sameLayout(cur.Layout, w.Layout) {
			if _, err := os.Stat(cur.SkillsDir); err == nil {
				continue
			}
			g.log.Warn("skill repository checkout is missing; fetching it again", "repo", w.Name, "dir", cur.SkillsDir)
		}
		if ok && cur.URL != w.URL {
			if err := repos.Remove(ctx, w.Name); err != nil {
				errs[w.Name] = err.Error()
				continue
			}
		}
		fctx, cancel := context.WithTimeout(ctx, repoFetchTimeout)
		r, err := repos.Add(fctx, gitsource.Repo{Name: w.Name, URL: w.URL, Ref: w.Ref, Layout: w.Layout, Origin: repoFromConfig})
		cancel()
		if err != nil {
			errs[w.Name] = err.Error()
			g.log.Error("skill repository not served", "repo", w.Name, "url", w.URL, "err", err)
			continue
		}
		g.log.Info("skill repository", "repo", r.Name, "url", r.URL, "commit", r.Commit)
	}
	room.mu.Lock()
	room.repoErrs = errs
	room.mu.Unlock()
}

// errReposLoading is the repository manager's state until the start has
// opened it.
var errReposLoading = errors.New("the skill repositories are still loading; try again in a moment")

// repoManager returns the skill repository manager, or why there is none.
func (r *skillsRoom) repoManager() (*gitsource.Manager, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.repos, r.repoErr
}

// repoFromConfig is the Origin of repositories the config lists.
const repoFromConfig = "config"

func sameLayout(a, b string) bool {
	norm := func(s string) string {
		if s == "" {
			return gitsource.LayoutAuto
		}
		return s
	}
	return norm(a) == norm(b)
}

// reloadSkills applies a new config's skills settings: dirs, hooks, the
// output budget and repositories. Skills switched on or off need a
// restart, since the meta-tools and the extension are announced at start.
func (g *Gateway) reloadSkills(ctx context.Context, cfg *config.Config) {
	g.mu.Lock()
	room := g.skills
	g.mu.Unlock()
	if room == nil {
		if cfg.Skills.Configured() {
			g.log.Warn("skills: the gateway started without skills; restart it to serve them")
		}
		return
	}
	if !cfg.Skills.Configured() {
		g.log.Warn("skills: the config has none now; their meta-tools stay listed until a restart")
	}
	room.lib.SetOutputBudget(SkillsBudget(cfg))
	room.lib.SetSandboxRule(SkillsSandboxRule(cfg))
	if err := room.lib.SetEnvRule(ctx, SkillsEnvRule(cfg)); err != nil {
		g.log.Warn("skills env_allow not reloaded", "err", err)
	}
	room.mu.Lock()
	old := room.dirs
	room.dirs = slices.Clone(cfg.Skills.Dirs)
	room.mu.Unlock()
	for _, d := range old {
		if !slices.Contains(cfg.Skills.Dirs, d) {
			if err := room.lib.RemoveRoot(ctx, d); err != nil {
				g.log.Warn("skills dir not removed", "dir", d, "err", err)
			}
		}
	}
	for _, d := range cfg.Skills.Dirs {
		if !slices.Contains(old, d) {
			if err := room.lib.AddRoot(ctx, d, "dir"); err != nil {
				g.log.Warn("skills dir not added", "dir", d, "err", err)
			}
		}
	}
	if err := room.lib.SetHooksDirs(ctx, cfg.Skills.HooksDirs); err != nil {
		g.log.Warn("skills hooks not reloaded", "err", err)
	}
	g.syncRepos(ctx, room, cfg.Skills.Repos)
	g.applyProfileSkills(room, cfg, true)
}
