package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/toolstore"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// Tool folders: every folder with a tool.yaml under a tools.dirs entry is
// one source, run by the script executor or (runtime wasm) the wasm
// executor. A watcher stats the folders every toolScanInterval and reloads
// what changed, so an added, edited or deleted folder reaches the catalog
// (and clients, through list_changed) within a second.
//
// A folder whose tool.yaml is invalid is reported in Status with state
// "invalid" and the file:line problems. It is not retried (the next edit
// reloads it) and does not make /readyz fail: a typo in one tool must not
// take every replica of a gateway out of a load balancer. Any other
// failure (the executor cannot start) is "failed", retried with backoff,
// and counts against readiness like a server's.

const (
	// ToolsNamespace prefixes the tools of tool folders: tools__<name>.
	ToolsNamespace = "tools"
	// toolScanInterval is how often the tools dirs are checked for changes.
	toolScanInterval = 250 * time.Millisecond
	// toolOrder places tool folders after servers when names collide.
	toolOrder = 1 << 16
	// stateInvalid is the state of a source whose own definition is wrong.
	stateInvalid = "invalid"
	// maxFolderEntries bounds the files a fingerprint looks at per folder.
	maxFolderEntries = 10_000
)

// toolSourceID is the source of the tool folder named folder. The colon
// keeps it apart from server names.
func toolSourceID(folder string) string { return "tool:" + folder }

// toolFolders watches the tools dirs.
type toolFolders struct {
	g    *Gateway
	kick chan struct{}

	mu      sync.Mutex // held by a scan; guards everything below
	dirs    []string   // absolute
	cfg     *config.Config
	folders map[string]*toolFolder // by source ID
	stores  map[string]*toolstore.Store
	started bool
	gen     int // bumped by every config
}

// toolFolder is what the watcher knows of one folder.
type toolFolder struct {
	id, dir string
	fp      uint64 // files when last loaded (0: load again)
	spec    []byte // spec last loaded
	gen     int    // toolFolders.gen when last loaded
	// the config's services when last loaded, for a tool that requires
	// some: a change of them checks its requires again
	services string
	src      *source

	building bool
	buildFP  uint64 // files when a build last failed
	buildErr string
	retryAt  time.Time // when a failed load is tried again
	backoff  time.Duration
}

func newToolFolders(g *Gateway) *toolFolders {
	return &toolFolders{g: g, kick: make(chan struct{}, 1), folders: map[string]*toolFolder{}, stores: map[string]*toolstore.Store{}}
}

// stateRoot is where the gateway keeps tools' state: $XDG_STATE_HOME/skillgate,
// else ~/.local/state/skillgate, else the temp folder.
func stateRoot() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "skillgate")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "skillgate")
	}
	return filepath.Join(os.TempDir(), "skillgate-state")
}

// SkillReposDir is where the gateway keeps the skill repositories it
// fetched (mirrors, checkouts and repos.json), under the state folder
// ($XDG_STATE_HOME/skillgate or ~/.local/state/skillgate).
func SkillReposDir() string { return filepath.Join(stateRoot(), "skills", "git") }

// startTools loads the tool folders of cfg and starts watching them. It
// returns when every folder had a first try.
func (g *Gateway) startTools(ctx context.Context, cfg *config.Config) {
	t := g.tools
	t.mu.Lock()
	t.setConfig(cfg)
	t.started = true
	t.mu.Unlock()
	for _, dir := range cfg.Tools.Dirs {
		if _, err := os.Stat(dir); err != nil {
			g.log.Warn("tools dir not found; its tools are served once it is created", "dir", dir, "err", err)
		}
	}
	t.scan(ctx)
	g.mu.Lock()
	if g.closed || g.execs.runCtx == nil {
		g.mu.Unlock()
		return
	}
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		t.watch(g.execs.runCtx)
	}()
}

// reloadTools applies a new config's tools dirs and limits; it returns
// after the folders were scanned again.
func (g *Gateway) reloadTools(ctx context.Context, cfg *config.Config) {
	t := g.tools
	t.mu.Lock()
	if !t.started {
		t.mu.Unlock()
		return
	}
	t.setConfig(cfg)
	t.mu.Unlock()
	t.scan(ctx)
}

func (t *toolFolders) setConfig(cfg *config.Config) {
	t.cfg = cfg
	t.gen++
	t.dirs = t.dirs[:0]
	for _, d := range cfg.Tools.Dirs {
		if abs, err := filepath.Abs(d); err == nil {
			t.dirs = append(t.dirs, abs)
		}
	}
}

// watch scans every toolScanInterval, or at once when kicked, until ctx ends.
func (t *toolFolders) watch(ctx context.Context) {
	tick := time.NewTicker(toolScanInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-t.kick:
		}
		t.scan(ctx)
	}
}

func (t *toolFolders) poke() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// found is a folder seen by a scan.
type found struct {
	id, dir string
	order   int
	fp      uint64
}

// scan compares the folders on disk with the loaded ones and loads,
// reloads or removes sources, at most 4 at a time.
func (t *toolFolders) scan(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	seen := map[string]found{}
	n := 0
	for _, dir := range t.dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a missing dir may appear later
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue // .versions, temporary folders, editors' files
			}
			id := toolSourceID(name)
			if _, dup := seen[id]; dup {
				continue // an earlier dir's folder of the same name wins, as in PATH
			}
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(filepath.Join(p, toolspec.FileName)); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			seen[id] = found{id: id, dir: p, order: toolOrder + n, fp: fingerprint(p)}
			n++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(t.folders)) {
		f := t.folders[id]
		if s, ok := seen[id]; (!ok || s.dir != f.dir) && !f.building {
			delete(t.folders, id)
			t.g.dropTool(ctx, f)
		}
	}
	now := time.Now()
	var todo []func()
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		s := seen[id]
		f := t.folders[id]
		if f == nil {
			f = &toolFolder{id: id, dir: s.dir}
			t.folders[id] = f
		}
		if f.building {
			continue
		}
		// Parse tool.yaml only when something may have changed: a quiet
		// scan stats files and allocates little.
		if s.fp == f.fp && f.gen == t.gen && (f.retryAt.IsZero() || now.Before(f.retryAt)) {
			continue
		}
		spec, tool, perr := t.spec(f)
		if s.fp == f.fp && string(spec) == string(f.spec) && f.retryAt.IsZero() &&
			(tool == nil || len(tool.Requires) == 0 || f.services == strings.Join(t.serviceNames(), "\n")) {
			f.gen = t.gen // a config change that leaves this tool alone
			continue
		}
		todo = append(todo, func() { t.load(ctx, f, s, spec, tool, perr) })
	}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, fn := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn()
		}()
	}
	wg.Wait()
}

// spec reads the folder's tool.yaml and returns the executor spec for it.
// It does not look at the entry (a wasm entry may still need building).
func (t *toolFolders) spec(f *toolFolder) ([]byte, *toolspec.Tool, error) {
	fh, err := os.Open(filepath.Join(f.dir, toolspec.FileName))
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	tool, err := toolspec.Parse(fh, filepath.Join(f.dir, toolspec.FileName))
	if err != nil {
		return nil, nil, err
	}
	lim := t.cfg.Limits
	spec := toolspec.Spec{
		Dir:  f.dir,
		Tool: *tool,
		Limits: toolspec.Limits{
			Timeout:      toolspec.Duration(lim.RequestTimeout),
			MaxTimeout:   toolspec.Duration(lim.MaxRequestTimeout),
			StallTimeout: toolspec.Duration(lim.StallTimeout),
			OutputCap:    toolspec.ByteSize(lim.ScriptOutputCap),
			Concurrency:  lim.ScriptConcurrency,
		},
		StateDir: filepath.Join(stateRoot(), "tools", strings.TrimPrefix(f.id, "tool:")),
	}
	// Executors run out of process with a clean environment: hand them
	// the values of what the tool declares.
	spec.ResolveEnviron(os.LookupEnv)
	b, err := json.Marshal(spec)
	return b, tool, err
}

// serviceNames are the names of the config's services, sorted.
func (t *toolFolders) serviceNames() []string {
	// Never nil: with no services, every name a tool requires is unknown
	// (toolspec.LoadFor skips the check on nil).
	return append([]string{}, slices.Sorted(maps.Keys(t.cfg.Services))...)
}

// load (re)loads one folder. It runs without t.mu held by anyone else
// touching f: scans are serialized and each folder is loaded once per scan.
func (t *toolFolders) load(ctx context.Context, f *toolFolder, s found, spec []byte, tool *toolspec.Tool, perr error) {
	g := t.g
	f.fp, f.spec, f.gen, f.retryAt = s.fp, spec, t.gen, time.Time{}
	if perr == nil {
		if lang, need := needsBuild(f.dir, tool); need && f.buildFP != s.fp {
			t.build(ctx, f, s, tool, lang)
			return
		} else if need && f.buildFP == s.fp {
			perr = errors.New(f.buildErr)
		}
	}
	if perr == nil {
		// A service the config lacks fails every call; say so now.
		svcs := t.serviceNames()
		f.services = strings.Join(svcs, "\n")
		_, perr = toolspec.LoadFor(f.dir, svcs)
	}
	if perr != nil {
		t.invalid(ctx, f, s, perr.Error())
		return
	}
	execName := "script"
	if tool.Runtime == toolspec.RuntimeWasm {
		execName = "wasm"
	}
	ns := &source{
		id: f.id, execName: execName, inprocess: t.isolation(execName) == "inprocess",
		namespace: ToolsNamespace, order: s.order, kind: execName, spec: spec, requires: tool.Requires,
		st: SourceStatus{Name: f.id, Executor: execName, State: "starting", Since: time.Now()},
	}
	if tool.Timeout > 0 {
		// The executor's own timeout answers first, with its status.
		ns.timeout = tool.Timeout.Std() + 5*time.Second
	}
	if old := f.src; old != nil && old.execName != execName {
		old.stop(ctx)
	}
	err := g.load(ctx, ns)
	if err != nil {
		// The executor kept the old version; it must not serve either.
		if old := f.src; old != nil {
			old.stop(ctx)
		}
		g.removeSource(f.id)
		if errors.Is(err, sdk.ErrInvalidSpec) {
			ns.setState(stateInvalid, err.Error())
		} else {
			f.backoff = min(max(2*f.backoff, time.Second), 30*time.Second)
			f.retryAt = time.Now().Add(f.backoff)
		}
	} else {
		f.backoff = 0
	}
	t.install(f, ns)
}

// invalid reports a folder whose definition is wrong and takes its old
// version out of service.
func (t *toolFolders) invalid(ctx context.Context, f *toolFolder, s found, msg string) {
	if old := f.src; old != nil {
		old.stop(ctx)
		t.g.removeSource(f.id)
	}
	ns := &source{
		id: f.id, execName: "script", namespace: ToolsNamespace, order: s.order, kind: "script",
		st: SourceStatus{Name: f.id, Executor: "script", Since: time.Now()},
	}
	ns.setState(stateInvalid, msg)
	t.g.log.Warn("tool folder invalid", "source", f.id, "err", msg)
	t.install(f, ns)
}

// install makes ns the folder's source in the gateway's table.
func (t *toolFolders) install(f *toolFolder, ns *source) {
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	f.src = ns
	g.putSource(ns)
}

// dropTool unloads a folder that is gone.
func (g *Gateway) dropTool(ctx context.Context, f *toolFolder) {
	if f.src != nil {
		f.src.stop(ctx)
	}
	g.removeSource(f.id)
	g.mu.Lock()
	if g.sources[f.id] == f.src {
		g.dropSource(f.id)
	}
	g.mu.Unlock()
	g.log.Info("tool folder removed", "source", f.id, "dir", f.dir)
}

func (t *toolFolders) isolation(exec string) string {
	if ex := t.cfg.Executors[exec]; ex != nil {
		return ex.Isolation
	}
	return ""
}

// build compiles a wasm tool's sources in the background; the folder is
// reloaded when the module is written (its files changed). Meanwhile the
// previous version, if any, keeps serving.
func (t *toolFolders) build(ctx context.Context, f *toolFolder, s found, tool *toolspec.Tool, lang string) {
	g := t.g
	f.building = true
	if f.src == nil {
		ns := &source{
			id: f.id, execName: "wasm", namespace: ToolsNamespace, order: s.order, kind: "wasm",
			st: SourceStatus{Name: f.id, Executor: "wasm", Since: time.Now()},
		}
		ns.setState("starting", fmt.Sprintf("building %s from %s source", tool.Entry, lang))
		t.install(f, ns)
	}
	style := toolspec.StyleCommand
	if tool.Wasm != nil && tool.Wasm.Style != "" {
		style = tool.Wasm.Style
	}
	out := filepath.Join(f.dir, filepath.FromSlash(tool.Entry))
	g.log.Info("building wasm tool", "source", f.id, "lang", lang, "out", out)
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		bctx := ctx
		if g.execs.runCtx != nil {
			bctx = g.execs.runCtx
		}
		err := toolstore.DefaultBuild(bctx, lang, f.dir, out, style)
		t.mu.Lock()
		f.building = false
		if err != nil {
			f.buildFP, f.buildErr = f.fp, fmt.Sprintf("build %s from %s source: %v", tool.Entry, lang, err)
			g.log.Warn("wasm tool build failed", "source", f.id, "err", err)
		}
		f.fp = 0 // load again on the next scan
		t.mu.Unlock()
		t.poke()
	}()
}

// needsBuild reports whether a wasm tool's entry must be built from the
// sources next to it: it is missing, or older than a source file.
func needsBuild(dir string, tool *toolspec.Tool) (lang string, need bool) {
	if tool.Runtime != toolspec.RuntimeWasm {
		return "", false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var newest time.Time
	for _, e := range entries {
		n := e.Name()
		switch {
		case n == "Cargo.toml":
			lang = "rust"
		case n == "go.mod" || strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go"):
			if lang == "" {
				lang = "go"
			}
		default:
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	if lang == "" {
		return "", false
	}
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tool.Entry)))
	if err != nil {
		return lang, errors.Is(err, fs.ErrNotExist)
	}
	return lang, fi.ModTime().Before(newest)
}

// fingerprint hashes the names, sizes, modes and modification times of a
// folder's files (dependency and hidden folders left out).
func fingerprint(dir string) uint64 {
	h := fnv.New64a()
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return 1
	}
	n := 0
	var buf [8]byte
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxFolderEntries {
			return filepath.SkipAll
		}
		if d.IsDir() && p != root {
			switch d.Name() {
			case "node_modules", "__pycache__", ".git", ".venv", "target":
				return filepath.SkipDir
			}
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		h.Write([]byte(p[len(root):]))
		for _, v := range []int64{fi.Size(), fi.ModTime().UnixNano(), int64(fi.Mode())} {
			for i := range buf {
				buf[i] = byte(v >> (8 * i))
			}
			h.Write(buf[:])
		}
		return nil
	})
	if v := h.Sum64(); v != 0 {
		return v
	}
	return 1
}

// WaitTool waits until the catalog serves the tool name, until done is
// closed (the caller's Start returned: every source had its first load)
// or until ctx is done, and reports whether the catalog serves the tool.
// A one-shot call (`skillgate call`) runs Start in the background and
// calls its tool once this returns true, so that a source that is slow to
// load (a plugin that hangs until limits.load_timeout) holds back only
// the calls of its own tools. It waits while another source that may
// serve name is in its first load (contested), and for the gateway's own
// tools (admin__servers, the skills' meta-tools ...), which tell of or
// call the other sources, it waits for done.
func (g *Gateway) WaitTool(ctx context.Context, name string, done <-chan struct{}) bool {
	snaps, stop := g.store.Subscribe()
	defer stop()
	for {
		if it, ok := g.store.Load().Tool(name); ok && !strings.HasPrefix(it.Source, "gateway:") && !g.contested(name) {
			return true
		}
		select {
		case <-snaps:
		case <-done:
			_, ok := g.store.Load().Tool(name)
			return ok
		case <-ctx.Done():
			return false
		}
	}
}

// contested reports whether a source that may serve the tool name (its
// namespace prefixes name, or it has none) is in its first load: the
// catalog settles a collision by the sources' order, so name may be that
// source's tool once it is loaded. A first load that fails publishes
// nothing: WaitTool then waits for its done.
func (g *Gateway) contested(name string) bool {
	g.mu.Lock()
	sep := cmp.Or(g.cfg.Names.Separator, catalog.DefaultSeparator)
	var may []*source
	for _, s := range g.sources {
		if !s.internal && (s.namespace == "" || strings.HasPrefix(name, s.namespace+sep)) {
			may = append(may, s)
		}
	}
	g.mu.Unlock()
	for _, s := range may {
		s.mu.Lock()
		first := !s.loaded && s.st.State == "starting"
		s.mu.Unlock()
		if first {
			return true
		}
	}
	return false
}
