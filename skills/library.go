package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/skills/shape"
)

// Defaults of Options.
const (
	// DefaultInterval is how often the tree is stat-checked.
	DefaultInterval = 2 * time.Second
	// DefaultFileCap is the most read_skill_file returns of one file.
	DefaultFileCap = 256 << 10
	// DefaultBodyCap is the largest SKILL.md body served.
	DefaultBodyCap = 1 << 20
	// maxScripts bounds the files listed under one skill's scripts/.
	maxScripts = 256
)

// Options configure a Library.
type Options struct {
	// Dirs are the skills folders. Each holds skill folders
	// (<dir>/<skill>/SKILL.md), or team folders of them
	// (<dir>/<team>/<skill>/SKILL.md).
	Dirs []string
	// HooksDirs are global hooks folders (pre.* and post.* files), run
	// around every skill's scripts.
	HooksDirs []string
	// Interval is how often the tree is stat-checked for changes; zero
	// means DefaultInterval, negative turns the check off.
	Interval time.Duration
	// NoWatch turns the file watcher off (the periodic check remains).
	NoWatch bool
	// Logger receives the library's messages; nil discards them.
	Logger *slog.Logger
	// Executor runs scripts and hooks: the script executor (plugins/script),
	// in process or a plugin client. Nil makes RunScript fail.
	Executor sdk.Executor
	// StateDir is where scripts get their state and dependency folders;
	// default the user cache dir's skillgate/skills.
	StateDir string
	// Defaults is the policy of scripts that set none.
	Defaults Policy
	// MaxTimeout caps any script's timeout; zero means no cap.
	MaxTimeout time.Duration
	// Interpreters maps a runtime (python, node, bash, ruby, exec) to the
	// argv that runs a script; nil means python3, node, bash, ruby and
	// executable files.
	Interpreters map[string][]string
	// FileCap is the most ReadFile returns; zero means DefaultFileCap.
	FileCap int64
	// OutputBudget is the byte budget scripts are told about
	// (SKILLGATE_OUTPUT_BUDGET) and their results are shaped to; zero
	// means no shaping.
	OutputBudget int
	// Artifacts keeps the full output of shaped results; nil keeps none.
	Artifacts *shape.Store
	// OnChange is called (from the refreshing goroutine) with each new
	// snapshot after it is published.
	OnChange func(*Snapshot)
	// ReservedNamespaces are names a skill's own tools and pipelines may
	// not be namespaced by (the gateway's: pipeline__*, skill__*, ...). A
	// skill whose ID is one keeps its instructions and scripts; its
	// tools/ and pipelines/ are not served, and a problem says why.
	ReservedNamespaces []string
	// Env says which variables of the gateway's environment scripts may
	// ask for (env: in SKILL.md); see EnvRule. SetEnvRule changes it.
	Env EnvRule
	// Sandbox says which skills' scripts and hooks run under the sandbox
	// whatever SKILL.md says (skills.sandbox); see SandboxRule.
	// SetSandboxRule changes it.
	Sandbox SandboxRule
}

// GlobalHooksDir is the folder of a skills dir (a root of source "dir")
// whose pre.* and post.* files run around every skill's scripts, after
// those of Options.HooksDirs. It is looked for on every rescan.
const GlobalHooksDir = "_hooks"

// root is one skills folder and where it comes from.
type root struct {
	dir    string
	source string
}

// Library is an index of skills folders. Reads (Snapshot, Lookup, Body,
// ReadFile) take no lock and do no I/O beyond the file they serve;
// refreshes build a new Snapshot off the request path and swap it in.
// Its methods are safe for concurrent use.
type Library struct {
	opts Options
	log  *slog.Logger
	snap atomic.Pointer[Snapshot]

	refreshMu sync.Mutex // one refresh at a time
	rootsMu   sync.Mutex
	roots     []root

	budget  atomic.Int64 // OutputBudget, changed by SetOutputBudget
	rules   atomic.Pointer[runRules]
	rulesMu sync.Mutex // one change of rules at a time
	hooks   []string   // HooksDirs, changed by SetHooksDirs (under rootsMu)

	bodies     sync.Map // SKILL.md path -> *body
	stateMoved sync.Map // state folders whose old-named folder was looked for (stateDir)
	runner     *runner
	kick       chan struct{}
	cwd        string          // where problem paths are relative to
	logged     map[string]bool // problems logged already (under refreshMu)
}

// New returns a library over opts.Dirs. It reads nothing: call Refresh
// (or Run) to scan.
func New(opts Options) *Library {
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.FileCap <= 0 {
		opts.FileCap = DefaultFileCap
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l := &Library{opts: opts, log: opts.Logger, kick: make(chan struct{}, 1)}
	l.cwd, _ = os.Getwd()
	l.budget.Store(int64(opts.OutputBudget))
	l.rules.Store(&runRules{env: opts.Env, sandbox: opts.Sandbox})
	l.hooks = slices.Clone(opts.HooksDirs)
	for _, d := range opts.Dirs {
		l.roots = append(l.roots, root{dir: absPath(d), source: "dir"})
	}
	l.snap.Store(newSnapshot(nil, nil, nil, hookSet{}, 0))
	l.runner = newRunner(l)
	return l
}

// Open is New followed by a first Refresh.
func Open(ctx context.Context, opts Options) (*Library, error) {
	l := New(opts)
	if _, err := l.Refresh(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Snapshot returns the current snapshot.
func (l *Library) Snapshot() *Snapshot { return l.snap.Load() }

// Lookup finds a skill of the current snapshot by ID or unique name.
func (l *Library) Lookup(name string) (*Skill, error) { return l.Snapshot().Lookup(name) }

// AddRoot adds a skills folder at run time (a git checkout, say), labelled
// with source, and refreshes. Adding a folder again replaces its source.
func (l *Library) AddRoot(ctx context.Context, dir, source string) error {
	dir = absPath(dir)
	l.rootsMu.Lock()
	i := slices.IndexFunc(l.roots, func(r root) bool { return r.dir == dir })
	if i >= 0 {
		l.roots[i].source = source
	} else {
		l.roots = append(l.roots, root{dir: dir, source: source})
	}
	l.rootsMu.Unlock()
	return l.Rescan(ctx)
}

// RemoveRoot removes a skills folder and refreshes.
func (l *Library) RemoveRoot(ctx context.Context, dir string) error {
	dir = absPath(dir)
	l.rootsMu.Lock()
	l.roots = slices.DeleteFunc(l.roots, func(r root) bool { return r.dir == dir })
	l.rootsMu.Unlock()
	return l.Rescan(ctx)
}

// ReplaceRoot puts the skills folder dir, labelled with source, in the
// place of old and refreshes once, so that no snapshot holds both (an
// update of a git checkout swaps one commit's folder for the next's).
func (l *Library) ReplaceRoot(ctx context.Context, old, dir, source string) error {
	old, dir = absPath(old), absPath(dir)
	l.rootsMu.Lock()
	l.roots = slices.DeleteFunc(l.roots, func(r root) bool { return r.dir == old || r.dir == dir })
	l.roots = append(l.roots, root{dir: dir, source: source})
	l.rootsMu.Unlock()
	return l.Rescan(ctx)
}

// SetOutputBudget changes Options.OutputBudget for the runs and loads
// that start after it returns.
func (l *Library) SetOutputBudget(bytes int) { l.budget.Store(int64(bytes)) }

// outputBudget is the current Options.OutputBudget.
func (l *Library) outputBudget() int { return int(l.budget.Load()) }

// SetHooksDirs replaces Options.HooksDirs and rescans.
func (l *Library) SetHooksDirs(ctx context.Context, dirs []string) error {
	l.rootsMu.Lock()
	l.hooks = slices.Clone(dirs)
	l.rootsMu.Unlock()
	return l.Rescan(ctx)
}

// Roots returns the skills folders and their sources.
func (l *Library) Roots() map[string]string {
	l.rootsMu.Lock()
	defer l.rootsMu.Unlock()
	out := make(map[string]string, len(l.roots))
	for _, r := range l.roots {
		out[r.dir] = r.source
	}
	return out
}

// Changed reports whether anything the current snapshot was built from
// changed on disk: one stat per skill, root and team folder, and no
// allocation.
func (l *Library) Changed() bool { return l.snap.Load().changed() }

func (s *Snapshot) changed() bool {
	var st stamp
	for i := range s.stamps {
		p := &s.stamps[i]
		statPath(p.path, &st)
		if st != p.st {
			return true
		}
	}
	return false
}

// Refresh rescans the tree when it changed (or was never scanned) and
// publishes a new snapshot. It reports whether it published one. Only
// SKILL.md files whose (mtime, size) changed are read again.
func (l *Library) Refresh(ctx context.Context) (bool, error) {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	old := l.snap.Load()
	if old.gen > 0 && !old.changed() {
		return false, nil
	}
	return true, l.rescan(ctx, old)
}

// Rescan rebuilds the snapshot even when no stat changed (hooks, scripts
// and tools folders are not stat-checked, only watched).
func (l *Library) Rescan(ctx context.Context) error {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	return l.rescan(ctx, l.snap.Load())
}

func (l *Library) rescan(ctx context.Context, old *Snapshot) error {
	l.rootsMu.Lock()
	roots := slices.Clone(l.roots)
	hooks := slices.Clone(l.hooks)
	l.rootsMu.Unlock()
	sc := &scanner{old: old, log: l.log, cwd: l.cwd, reserved: l.opts.ReservedNamespaces, env: l.rules.Load().env}
	for _, r := range roots {
		if err := ctx.Err(); err != nil {
			return err
		}
		sc.root(r)
	}
	global := hookSet{}
	for _, d := range hooks {
		d = absPath(d)
		global = global.add(findHooks(d))
		sc.stampPath(d)
	}
	// Each skills dir's _hooks, looked for on every rescan (and stamped,
	// so a folder or hook created later is picked up like a skill).
	for _, r := range roots {
		if r.source == "dir" {
			d := filepath.Join(r.dir, GlobalHooksDir)
			global = global.add(findHooks(d))
			sc.stampPath(d)
		}
	}
	sc.promptNames()
	snap := newSnapshot(sc.skills, sc.problems, sc.stamps, global, old.gen+1)
	snap.held = sc.held
	l.snap.Store(snap)
	l.logProblems(snap.Problems())
	if l.opts.OnChange != nil {
		l.opts.OnChange(snap)
	}
	return nil
}

// logProblems logs the problems that were not in the last scan: a broken
// skill is logged when it breaks, not on every rescan.
func (l *Library) logProblems(probs []Problem) {
	cur := make(map[string]bool, len(probs))
	for _, p := range probs {
		s := p.String()
		cur[s] = true
		if !l.logged[s] {
			l.log.Warn("skill problem", "problem", s)
		}
	}
	l.logged = cur
}

// Run keeps the snapshot current until ctx is done: a file watcher (unless
// NoWatch) and a periodic stat check (unless Interval < 0) trigger
// refreshes. It scans first when nothing was scanned yet.
func (l *Library) Run(ctx context.Context) error {
	var w *watcher
	if !l.opts.NoWatch {
		var err error
		if w, err = newWatcher(l); err != nil {
			l.log.Warn("skills: no file watcher, relying on the periodic check", "err", err)
			w = nil
		} else {
			defer w.close()
		}
	}
	if l.snap.Load().gen == 0 {
		if _, err := l.Refresh(ctx); err != nil {
			return err
		}
	}
	if w != nil {
		w.sync(l.snap.Load())
		// What changed before the watches were in place.
		if l.Changed() {
			l.Kick()
		}
	}
	var tick <-chan time.Time
	if l.opts.Interval > 0 {
		t := time.NewTicker(l.opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		var events <-chan struct{}
		if w != nil {
			events = w.events
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if !l.Changed() {
				continue
			}
		case <-events:
		case <-l.kick:
		}
		if err := l.Rescan(ctx); err != nil && !errors.Is(err, context.Canceled) {
			l.log.Warn("skills refresh failed", "err", err)
		}
		if w != nil {
			w.sync(l.snap.Load())
		}
	}
}

// Kick asks Run to rescan now.
func (l *Library) Kick() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Close releases the scripts loaded into the executor. It is idempotent.
func (l *Library) Close() error {
	l.runner.close()
	return nil
}

// stamp is what a stat says about a file, to tell whether it changed.
type stamp struct {
	mtime int64
	size  int64
	ino   uint64
	ok    bool
}

// stampedPath is a path (NUL-terminated, for statPath) and its stamp.
type stampedPath struct {
	path []byte
	st   stamp
}

func cpath(p string) []byte {
	b := make([]byte, len(p)+1)
	copy(b, p)
	return b
}

// scanner builds one snapshot.
type scanner struct {
	old      *Snapshot
	log      *slog.Logger
	cwd      string
	reserved []string
	env      EnvRule // what envProblems warns about
	skills   []*Skill
	problems []Problem
	stamps   []stampedPath
	seen     map[string]string // ID -> dir
	held     heldNames         // broken skills, which keep their names (hold)
}

// hold keeps the ID of a skill whose SKILL.md broke (team/name) bound to
// its folder dir for the rest of the scan: a skill of the same ID in a
// later skills dir is not served in its place, and clients asking for it,
// by that ID or by its folder (team/folder), get the broken skill's error
// (the problems at rel, its SKILL.md) rather than another skill.
func (sc *scanner) hold(dir, team, folder, name, rel string) {
	id, byFolder := name, folder
	if team != "" {
		id, byFolder = team+"/"+name, team+"/"+folder
	}
	if sc.seen == nil {
		sc.seen = map[string]string{}
	}
	if sc.held.ids == nil {
		sc.held = heldNames{ids: map[string]string{}, folders: map[string]string{}}
	}
	if _, dup := sc.held.folders[byFolder]; !dup {
		sc.held.folders[byFolder] = rel
	}
	if _, dup := sc.seen[id]; dup {
		return
	}
	sc.seen[id], sc.held.ids[id] = dir, rel
}

// heldNames are the names broken skills hold, each to the path of its
// SKILL.md as problems name it: by ID (the frontmatter's name, or the one
// it was last served under, with its team) and by folder.
type heldNames struct {
	ids, folders map[string]string
}

// prevName is the frontmatter name prev (the skill of the last snapshot at
// the same SKILL.md, or nil) had, else folder.
func prevName(prev *Skill, folder string) string {
	if prev != nil && prev.Meta.Name != "" {
		return prev.Meta.Name
	}
	return folder
}

// rel is how problems name a path: relative to the working folder when
// it is under it, else absolute.
func (sc *scanner) rel(p string) string {
	if sc.cwd != "" {
		if r, err := filepath.Rel(sc.cwd, p); err == nil && filepath.IsLocal(r) {
			return r
		}
	}
	return p
}

func (sc *scanner) stampPath(p string) stamp {
	sp := stampedPath{path: cpath(p)}
	statPath(sp.path, &sp.st)
	sc.stamps = append(sc.stamps, sp)
	return sp.st
}

func (sc *scanner) root(r root) {
	sc.stampPath(r.dir)
	// A root that is itself a skill folder is that one skill.
	if fileExists(filepath.Join(r.dir, FileName)) {
		sc.skill(r, r.dir, "", filepath.Base(r.dir))
		sc.nested(r.dir, insideSkill)
		return
	}
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		sc.problems = append(sc.problems, Problem{Path: sc.rel(r.dir), Msg: "cannot read the skills folder: " + errMsg(err)})
		return
	}
	for _, e := range entries {
		dir := filepath.Join(r.dir, e.Name())
		if !isDirEntry(e, dir) || skipName(e.Name()) {
			continue
		}
		if fileExists(filepath.Join(dir, FileName)) {
			sc.skill(r, dir, "", e.Name())
			sc.nested(dir, insideSkill)
			continue
		}
		sc.stampPath(dir)
		if sc.misnamed(dir) {
			continue
		}
		// A team folder: skills one level down.
		sub, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, s := range sub {
			sd := filepath.Join(dir, s.Name())
			if !isDirEntry(s, sd) || skipName(s.Name()) {
				continue
			}
			if fileExists(filepath.Join(sd, FileName)) {
				sc.skill(r, sd, e.Name(), s.Name())
				sc.nested(sd, insideSkill)
			} else {
				sc.stampPath(sd)
				if !sc.misnamed(sd) {
					sc.nested(sd, tooDeep)
				}
			}
		}
	}
}

// Why nested reports a SKILL.md it finds.
const (
	insideSkill = "not served: it is inside the folder of the skill %s (which has a SKILL.md), so it is one of that skill's files; move its folder out, next to that skill or into a team folder"
	tooDeep     = "not served: skills are read at most two levels down (<skills dir>/<skill>/SKILL.md, or <skills dir>/<team>/<skill>/SKILL.md) and this one is deeper, under %s; move its folder up"
)

// nestedDepth bounds how far below a folder nested looks.
const nestedDepth = 4

// nested warns about each SKILL.md under dir (dir's own aside, up to
// nestedDepth levels down), which the scan does not serve: why says why,
// with dir for its %s.
func (sc *scanner) nested(dir, why string) {
	base := strings.Count(dir, string(filepath.Separator))
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if d.IsDir() {
			if skipName(d.Name()) || strings.Count(p, string(filepath.Separator))-base >= nestedDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == FileName && filepath.Dir(p) != dir {
			sc.problems = append(sc.problems, Problem{Path: sc.rel(p), Warning: true, Msg: fmt.Sprintf(why, sc.rel(dir))})
		}
		return nil
	})
}

// misnamed reports (and warns about) a folder whose SKILL.md is spelled
// in lower case, which is not read (file names are case-sensitive).
func (sc *scanner) misnamed(dir string) bool {
	for _, n := range []string{"skill.md", "Skill.md", "SKILL.MD"} {
		if fileExists(filepath.Join(dir, n)) {
			sc.problems = append(sc.problems, Problem{Path: sc.rel(filepath.Join(dir, n)), Warning: true,
				Msg: "not read: a skill's file is SKILL.md, in upper case; rename it to serve the skill"})
			return true
		}
	}
	return false
}

// promptNames warns about skills whose prompt name (the ID with "/"
// written "_") is another skill's: team/x and team_x. The first by ID
// keeps the prompt.
func (sc *scanner) promptNames() {
	byPrompt := make(map[string]string, len(sc.skills))
	sorted := slices.Clone(sc.skills)
	slices.SortFunc(sorted, func(a, b *Skill) int { return strings.Compare(a.ID, b.ID) })
	for _, sk := range sorted {
		pn := Namespace(sk.ID)
		if other, dup := byPrompt[pn]; dup {
			sc.problems = append(sc.problems, Problem{Path: sk.mdRel, Field: "name", Warning: true,
				Msg: fmt.Sprintf("the prompt %s is skill %s's already (team/x and team_x share a prompt name); this skill gets no prompt: rename one of them", pn, other)})
			continue
		}
		byPrompt[pn] = sk.ID
	}
}

// skipName skips hidden folders (.git), global hooks (_hooks) and the
// usual non-skill ones.
func skipName(n string) bool {
	return strings.HasPrefix(n, ".") || n == "node_modules" || n == "__pycache__" || n == GlobalHooksDir
}

func isDirEntry(e os.DirEntry, path string) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		return err == nil && fi.IsDir()
	}
	return false
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func errMsg(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (sc *scanner) skill(r root, dir, team, folder string) {
	md := filepath.Join(dir, FileName)
	st := sc.stampPath(md)
	rel := sc.rel(md)
	sk := &Skill{Team: team, Dir: dir, Root: r.dir, Source: r.source, mdPath: md, mdRel: rel, md: st}
	// Reuse the parsed frontmatter when SKILL.md did not change.
	prev := sc.old.byPath[md]
	if prev != nil && prev.md == st && st.ok {
		sk.Meta = prev.Meta
		sk.parseProblems = prev.parseProblems
	} else {
		meta, probs, ok := readMeta(dir, rel)
		if !ok {
			sc.problems = append(sc.problems, probs...)
			sc.hold(dir, team, folder, cmpOr(meta.Name, prevName(prev, folder)), rel)
			return
		}
		if st.size > DefaultBodyCap+MaxFrontmatter {
			probs = append(probs, Problem{Path: rel, Warning: true, Msg: fmt.Sprintf(
				"%d bytes: load_skill and prompts serve the first %d MiB of the body only (sections past it are not served); move long parts into references/ files, which read_skill_file pages through",
				st.size, DefaultBodyCap>>20)})
		}
		sk.Meta, sk.parseProblems = meta, probs
	}
	sk.Problems = slices.Clip(sk.parseProblems)
	if sk.Meta.Name != folder {
		sk.Problems = appendOnce(sk.Problems, Problem{Path: rel, Field: "name", Warning: true,
			Msg: "\"" + sk.Meta.Name + "\" differs from its folder \"" + folder + "\"; the skill is served as " + sk.Meta.Name})
	}
	sk.ID = sk.Meta.Name
	if team != "" {
		sk.ID = team + "/" + sk.Meta.Name
	}
	if sc.seen == nil {
		sc.seen = map[string]string{}
	}
	if other, dup := sc.seen[sk.ID]; dup {
		msg := "skill " + sk.ID + " is also defined in " + sc.rel(filepath.Join(other, FileName)) + "; the first one is served, rename this one"
		if _, held := sc.held.ids[sk.ID]; held {
			msg = "skill " + sk.ID + " is also defined in " + sc.rel(filepath.Join(other, FileName)) +
				", which comes first and is broken: the name stays that skill's (clients get its error) and this one is not served in its place; fix or remove the first one, or rename this one"
		}
		line, col := sk.Meta.Pos("name")
		sc.problems = append(sc.problems, Problem{Path: rel, Line: line, Column: col, Field: "name", Msg: msg})
		return
	}
	sc.seen[sk.ID] = dir
	sk.hooks = findHooks(filepath.Join(dir, "hooks"))
	sk.Scripts = listFiles(dir, "scripts", maxScripts)
	sk.nScripts = len(sk.Scripts)
	sk.Scripts = append(sk.Scripts, declaredScripts(sk, sk.Scripts)...)
	sk.ToolDirs = toolDirs(filepath.Join(dir, "tools"))
	if fi, err := os.Stat(filepath.Join(dir, "pipelines")); err == nil && fi.IsDir() {
		sk.PipelinesDir = filepath.Join(dir, "pipelines")
	}
	if ns := Namespace(sk.ID); (len(sk.ToolDirs) > 0 || sk.PipelinesDir != "") && slices.Contains(sc.reserved, ns) {
		sk.ToolDirs, sk.PipelinesDir = nil, ""
		sk.Problems = appendOnce(sk.Problems, Problem{Path: rel, Field: "name", Msg: fmt.Sprintf(
			"%q is the namespace of the gateway's own tools (%s__*): the skill's tools/ and pipelines/ are not served, its instructions and scripts are; rename the skill (the reserved names are %s)",
			ns, ns, strings.Join(sc.reserved, ", "))})
	}
	for _, p := range envProblems(sk, sc.env) {
		sk.Problems = appendOnce(sk.Problems, p)
	}
	sk.card = makeCard(sk)
	sk.keywords = keywords(sk)
	sc.problems = append(sc.problems, sk.Problems...)
	sc.skills = append(sc.skills, sk)
}

func appendOnce(ps []Problem, p Problem) []Problem {
	if slices.Contains(ps, p) {
		return ps
	}
	return append(slices.Clip(ps), p)
}

// jailMsg says why a skill's file could not be opened.
func jailMsg(err error) string {
	if errors.Is(err, ErrBadPath) && strings.Contains(err.Error(), "leads out") {
		return "it leads out of the skill folder (a symlink to a file elsewhere); skills serve only files inside their own folder: put the file itself there instead of a link"
	}
	return errMsg(err)
}

// readMeta reads the first MaxFrontmatter bytes of dir's SKILL.md
// (through the skill folder's jail: a SKILL.md that is a symlink leading
// out is refused) and parses its frontmatter. ok is false when the skill
// cannot be served.
func readMeta(dir, rel string) (Meta, []Problem, bool) {
	f, _, err := openInSkill(dir, FileName)
	if err != nil {
		return Meta{}, []Problem{{Path: rel, Msg: "cannot read: " + jailMsg(err)}}, false
	}
	defer f.Close()
	buf := make([]byte, MaxFrontmatter+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Meta{}, []Problem{{Path: rel, Msg: "cannot read: " + errMsg(err)}}, false
	}
	meta, _, err := ParseFrontmatter(buf[:n])
	var probs []Problem
	var fe *FrontmatterError
	if errors.As(err, &fe) {
		for _, p := range fe.Problems {
			p.Path = rel
			probs = append(probs, p)
		}
	}
	return meta, probs, !hasErrors(err)
}

// listFiles lists the regular files under skillDir's sub folder ("" for
// the whole skill), relative to it and slash-separated, at most max of
// them, skipping hidden ones and symlinks that do not lead to a file
// inside the skill folder (the jail would refuse them).
func listFiles(skillDir, sub string, max int) []string {
	dir := filepath.Join(skillDir, sub)
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != dir && skipName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		ok := d.Type().IsRegular()
		if d.Type()&os.ModeSymlink != 0 {
			if r, err := filepath.Rel(skillDir, p); err == nil {
				if f, _, err := openInSkill(skillDir, filepath.ToSlash(r)); err == nil {
					f.Close()
					ok = true
				}
			}
		}
		if ok {
			if rel, err := filepath.Rel(dir, p); err == nil {
				out = append(out, filepath.ToSlash(rel))
			}
			if len(out) >= max {
				return filepath.SkipAll
			}
		}
		return nil
	})
	return out
}

// toolDirs lists the folders under dir that hold a tool.yaml.
func toolDirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if isDirEntry(e, p) && !skipName(e.Name()) && fileExists(filepath.Join(p, "tool.yaml")) {
			out = append(out, p)
		}
	}
	return out
}
