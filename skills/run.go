package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/redact"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills/shape"
)

// MaxArgs is the most command-line arguments a script run may pass.
const MaxArgs = 64

// maxLoaded bounds the scripts kept loaded in the executor.
const maxLoaded = 128

// RunRequest is one run of a skill's script.
type RunRequest struct {
	// Skill is the skill's ID or unique name.
	Skill string `json:"skill"`
	// Script is the file's path relative to the skill folder
	// ("scripts/fill.py", "ooxml/scripts/unpack.py", "run.sh"); a path
	// not starting scripts/ is looked for under scripts/ first, so
	// "fill.py" is scripts/fill.py.
	Script string `json:"script"`
	// Args are the script's command-line arguments (at most MaxArgs).
	Args []string `json:"args,omitempty"`
	// Input, when set, reaches the script on stdin as {"input": ...}.
	Input json.RawMessage `json:"input,omitempty"`
}

// EnvRule says which variables of the gateway's environment a skill's
// scripts may ask for with env: in SKILL.md. A variable whose name does
// not look like a credential (redact.CredentialName) may be asked for; one
// that does needs Allow to name it; one of Deny (the variables the
// gateway's own auth tokens come from) needs Allow to name it exactly,
// not by a prefix.
type EnvRule struct {
	// Allow names variables, or prefixes ending in * ("AWS_*"), that
	// scripts may ask for although their names look like credentials
	// (the config's skills.env_allow).
	Allow []string
	// Deny names variables passed only when Allow names them exactly.
	Deny []string
}

// defaultInterpreters are the runtimes skill scripts run with.
func defaultInterpreters() map[string][]string {
	return map[string][]string{
		toolspec.RuntimePython: {"python3"},
		toolspec.RuntimeNode:   {"node"},
		toolspec.RuntimeBash:   {"bash"},
		toolspec.RuntimeRuby:   {"ruby"},
		toolspec.RuntimeExec:   {},
	}
}

// runtimeOf picks the runtime of a script by its extension, or exec for
// an executable file without a known one.
func runtimeOf(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py":
		return toolspec.RuntimePython, nil
	case ".js", ".mjs", ".cjs":
		return toolspec.RuntimeNode, nil
	case ".sh", ".bash":
		return toolspec.RuntimeBash, nil
	case ".rb":
		return toolspec.RuntimeRuby, nil
	}
	fi, err := os.Stat(path)
	if err == nil && fi.Mode()&0o111 != 0 {
		return toolspec.RuntimeExec, nil
	}
	return "", fmt.Errorf("cannot tell how to run %s: give it a .py, .js, .sh or .rb extension, or make it executable with a #! line", filepath.Base(path))
}

// key identifies a policy in a scriptKey.
func (p Policy) key() string {
	return fmt.Sprintf("%s|%s|%t|%s", p.Timeout, p.StallTimeout, p.Sandbox, strings.Join(p.Env, ","))
}

// scriptKey identifies one loaded source in the executor.
type scriptKey struct {
	dir, entry, runtime, policy, env string
	hook                             bool
	budget                           int // SKILLGATE_OUTPUT_BUDGET, baked into the loaded spec
}

// runner loads scripts into the executor as sources and calls them.
type runner struct {
	l   *Library
	seq atomic.Uint64

	mu     sync.Mutex
	loaded map[scriptKey]*loadedScript
	order  []scriptKey
	closed bool
}

type loadedScript struct {
	source string
	name   string
	ready  chan struct{}
	err    error
}

func newRunner(l *Library) *runner {
	return &runner{l: l, loaded: map[scriptKey]*loadedScript{}}
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]+`) })

// toolName is a valid tool name for a script.
func toolName(entry string) string {
	n := strings.Trim(unsafeName().ReplaceAllString(strings.TrimSuffix(entry, filepath.Ext(entry)), "_"), "_")
	if n == "" {
		n = "script"
	}
	if len(n) > 64 {
		n = n[len(n)-64:]
	}
	return n
}

// RunScript runs a script of a skill (a file of its folder, see
// RunRequest.Script) through the script executor with the skill's
// execution policy, between the hooks: global pre, skill pre, the script,
// skill post, global post. It returns the MCP CallToolResult. A script
// that fails is a result with isError set; an error means the run could
// not happen (unknown skill or script, a path leading out of the skill
// folder, SKILL.md, a hook or a tool folder's file: ErrNotScript; a hook
// that denied it: *DeniedError).
func (l *Library) RunScript(ctx context.Context, req RunRequest, call sdk.Call) (json.RawMessage, error) {
	snap := l.Snapshot()
	sk, err := snap.Lookup(req.Skill)
	if err != nil {
		return nil, err
	}
	if l.opts.Executor == nil {
		return nil, fmt.Errorf("%w: the gateway runs no script executor", ErrNoExecutor)
	}
	entry, policyKey, err := resolveScript(sk, snap.hooks, req.Script)
	if err != nil {
		return nil, err
	}
	rt, err := runtimeOf(filepath.Join(sk.Dir, entry))
	if err != nil {
		return nil, fmt.Errorf("skill %s: %v", sk.ID, err)
	}
	if len(req.Args) > MaxArgs {
		return nil, fmt.Errorf("skill %s: %d arguments; at most %d", sk.ID, len(req.Args), MaxArgs)
	}
	rules := l.rules.Load()
	if err := envRefused(sk, policyKey, rules.env); err != nil {
		return nil, fmt.Errorf("skill %s: run %s: %w", sk.ID, entry, err)
	}
	pol := l.policy(sk, policyKey)
	sandboxed := rules.sandbox.Requires(sk)
	ev := &HookEvent{Skill: sk.ID, Script: entry, Args: req.Args, Input: req.Input}
	if ev.Args == nil {
		ev.Args = []string{}
	}
	// Hooks cost nothing when there are none: two empty slices.
	pre := slices.Concat(snap.hooks.pre, sk.hooks.pre)
	for _, h := range pre {
		ev.Hook = "pre"
		d, err := l.runner.runHook(ctx, h, ev, call, sandboxed && slices.Contains(sk.hooks.pre, h))
		if err != nil {
			return nil, err
		}
		switch d.Decision {
		case "", "allow", "continue":
		case "deny", "block", "fail":
			return nil, &DeniedError{Hook: filepath.Base(h), Reason: d.Reason}
		default:
			return nil, hookFailed(h, fmt.Sprintf("gave the decision %q, which is not deny or empty", d.Decision))
		}
		if d.Args != nil {
			if len(*d.Args) > MaxArgs {
				return nil, hookFailed(h, fmt.Sprintf("gave %d arguments; at most %d", len(*d.Args), MaxArgs))
			}
			ev.Args = *d.Args
		}
		if d.Input != nil {
			ev.Input = d.Input
		}
		if len(d.Env) > 0 {
			if ev.Env == nil {
				ev.Env = map[string]string{}
			}
			maps.Copy(ev.Env, d.Env)
		}
	}
	args := map[string]any{"args": ev.Args}
	for i, a := range ev.Args {
		args[strconv.Itoa(i)] = a
	}
	if ev.Input != nil {
		args["input"] = ev.Input
	}
	argsJSON, _ := json.Marshal(args)
	budget := l.outputBudget()
	key := scriptKey{dir: sk.Dir, entry: entry, runtime: rt, policy: pol.key(), env: envKey(ev.Env), budget: budget}
	vars := map[string]string{"SKILLGATE_SKILL": sk.ID, "SKILLGATE_SKILL_DIR": sk.Dir}
	if b := budget; b > 0 {
		vars["SKILLGATE_OUTPUT_BUDGET"] = strconv.Itoa(b)
	}
	maps.Copy(vars, ev.Env)
	res, err := l.runner.call(ctx, key, pol, vars, argsJSON, call)
	if err != nil {
		return nil, fmt.Errorf("skill %s: run %s: %w", sk.ID, entry, err)
	}
	res = policyHint(res, policyKey)
	post := slices.Concat(sk.hooks.post, snap.hooks.post)
	for _, h := range post {
		ev.Hook = "post"
		ev.Result = res
		d, err := l.runner.runHook(ctx, h, ev, call, sandboxed && slices.Contains(sk.hooks.post, h))
		if err != nil {
			return nil, err
		}
		switch d.Decision {
		case "", "allow", "continue":
		case "fail", "deny", "block":
			return nil, &DeniedError{Hook: filepath.Base(h), Reason: d.Reason}
		default:
			return nil, hookFailed(h, fmt.Sprintf("gave the decision %q, which is not fail or empty", d.Decision))
		}
		if d.Result != nil {
			res = asResult(d.Result)
		}
	}
	if b := l.outputBudget(); b > 0 {
		sh := shape.Shaper{Budget: b, Store: l.opts.Artifacts,
			Hint: "pass arguments that narrow the output, or filter it in the script (it gets the byte budget in SKILLGATE_OUTPUT_BUDGET)"}
		res = sh.Result(res)
	}
	return res, nil
}

// policy is the execution policy a run of sk's script (its key in the
// frontmatter's scripts:) gets: SKILL.md's over Options.Defaults, its
// timeout capped by Options.MaxTimeout, in the sandbox when the library
// requires it.
func (l *Library) policy(sk *Skill, key string) Policy {
	pol := sk.Policy(key, l.opts.Defaults)
	if m := l.opts.MaxTimeout; m > 0 && (pol.Timeout == 0 || pol.Timeout > m) {
		pol.Timeout = m
	}
	if l.rules.Load().sandbox.Requires(sk) {
		pol.Sandbox = true
	}
	return pol
}

// runRules are the operator's rules for skills that SetEnvRule and
// SetSandboxRequired change at run time.
type runRules struct {
	env     EnvRule
	sandbox SandboxRule
}

// SetEnvRule replaces Options.Env for the runs that start after it
// returns, and rescans when it changed, so that the load warnings follow
// it.
func (l *Library) SetEnvRule(ctx context.Context, r EnvRule) error {
	l.rulesMu.Lock()
	cur := *l.rules.Load()
	same := slices.Equal(cur.env.Allow, r.Allow) && slices.Equal(cur.env.Deny, r.Deny)
	cur.env = r
	l.rules.Store(&cur)
	l.rulesMu.Unlock()
	if same {
		return nil
	}
	return l.Rescan(ctx)
}

// SetSandboxRule replaces Options.Sandbox for the runs that start after
// it returns.
func (l *Library) SetSandboxRule(r SandboxRule) {
	l.rulesMu.Lock()
	cur := *l.rules.Load()
	cur.sandbox = r
	l.rules.Store(&cur)
	l.rulesMu.Unlock()
}

// SandboxRule says which skills' scripts and own hooks run under the
// sandbox whatever their SKILL.md says (the global hooks, the operator's,
// run as they are).
type SandboxRule struct {
	// All is every skill (skills.sandbox: required).
	All bool
	// Repos is every skill of a git repository (skills.sandbox: repos):
	// those of the config's skills.repos and those skill__repo_add adds.
	Repos bool
	// URLs are git repositories whose skills it is (sandbox: required on
	// an entry of skills.repos), as their Source names them.
	URLs []string
}

// Requires reports whether r runs sk's scripts under the sandbox.
func (r SandboxRule) Requires(sk *Skill) bool {
	if r.All {
		return true
	}
	src, ok := strings.CutPrefix(sk.Source, "git ")
	if !ok {
		return false
	}
	if r.Repos {
		return true
	}
	if i := strings.LastIndexByte(src, '@'); i >= 0 {
		src = src[:i]
	}
	return slices.Contains(r.URLs, src)
}

// Refuses says why r keeps the variable name from skills, or "" when it
// does not.
func (r EnvRule) Refuses(name string) string {
	if slices.Contains(r.Allow, name) {
		return ""
	}
	if slices.Contains(r.Deny, name) {
		return "it holds one of the gateway's own auth tokens (auth.tokens), which skills get only when skills.env_allow names it exactly"
	}
	if !redact.CredentialName(name) {
		return ""
	}
	for _, a := range r.Allow {
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(name, p) {
			return ""
		}
	}
	return "its name looks like a credential's, and skills get those only when the gateway's config lists them in skills.env_allow"
}

// EnvError is the error of a run whose SKILL.md asks (env:) for a
// variable the gateway does not pass to skills (see EnvRule).
type EnvError struct {
	// Path and Line are where SKILL.md asks for it (Line 0: unknown).
	Path string
	Line int
	// Field is the frontmatter key: scripts.<script>.env or execution.env.
	Field string
	// Var is the variable.
	Var string
	// Why says why it is not passed.
	Why string
}

func (e *EnvError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return fmt.Sprintf("%s: %s asks for the variable %s, which the gateway does not pass to skills: %s; "+
		"to pass it, add %s to skills.env_allow in the gateway's config, or take it out of %s", where, e.Field, e.Var, e.Why, e.Var, e.Field)
}

// envRequests lists what sk's SKILL.md asks for under env: for the script
// of key ("" for execution: alone): the frontmatter field and the names.
func envRequests(sk *Skill, key string) (string, []string) {
	if p, ok := sk.Meta.Scripts[key]; ok && len(p.Env) > 0 {
		return "scripts." + key + ".env", p.Env
	}
	return "execution.env", sk.Meta.Execution.Env
}

// envRefused is the *EnvError of the first variable r refuses among those
// sk's script of key asks for, or nil.
func envRefused(sk *Skill, key string, r EnvRule) error {
	field, names := envRequests(sk, key)
	for _, n := range names {
		if why := r.Refuses(n); why != "" {
			return &EnvError{Path: sk.mdRel, Line: envLine(sk.mdPath, n), Field: field, Var: n, Why: why}
		}
	}
	return nil
}

// envProblems are the load warnings about the variables sk's SKILL.md
// asks for that r refuses, one per variable and field.
func envProblems(sk *Skill, r EnvRule) []Problem {
	var out []Problem
	keys := slices.Sorted(maps.Keys(sk.Meta.Scripts))
	for _, key := range append([]string{""}, keys...) {
		field, names := envRequests(sk, key)
		if key != "" && field == "execution.env" {
			continue // told once, for execution:
		}
		for _, n := range names {
			if why := r.Refuses(n); why != "" {
				out = append(out, Problem{Path: sk.mdRel, Line: envLine(sk.mdPath, n), Field: field, Warning: true, Msg: fmt.Sprintf(
					"the variable %s is not passed to the skill's scripts: %s; add %s to skills.env_allow in the gateway's config to pass it (until then a run of a script asking for it fails)",
					n, why, n)})
			}
		}
	}
	return out
}

// envLine is the line of md's frontmatter that names the variable name,
// or 0.
func envLine(md, name string) int {
	f, err := os.Open(md)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, MaxFrontmatter)
	n, _ := io.ReadFull(f, buf)
	yml, _, line0, err := splitFrontmatter(buf[:n])
	if err != nil {
		return 0
	}
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	for i, l := range strings.Split(string(yml), "\n") {
		if word.MatchString(l) {
			return line0 + i
		}
	}
	return 0
}

// policyHint points the script executor's "raise timeout in tool.yaml"
// of a killed run to where a skill script's policy lives: SKILL.md.
func policyHint(res json.RawMessage, script string) json.RawMessage {
	const toolYAML = " in tool.yaml"
	if !bytes.Contains(res, []byte(toolYAML)) {
		return res
	}
	var r map[string]json.RawMessage
	var content []map[string]any
	if json.Unmarshal(res, &r) != nil || json.Unmarshal(r["content"], &content) != nil {
		return res
	}
	where := fmt.Sprintf(" for %s in the skill's SKILL.md (scripts: {%s: {...}}, or execution: for all its scripts)", script, script)
	for _, c := range content {
		if t, ok := c["text"].(string); ok {
			c["text"] = strings.ReplaceAll(t, toolYAML, where)
		}
	}
	r["content"], _ = json.Marshal(content)
	out, err := json.Marshal(r)
	if err != nil {
		return res
	}
	return out
}

// asResult takes a CallToolResult as it is and makes any other value its
// text.
func asResult(v json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) == nil {
		if _, ok := obj["content"]; ok {
			return v
		}
	}
	text := string(v)
	var s string
	if json.Unmarshal(v, &s) == nil {
		text = s
	}
	out, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	return out
}

func envKey(env map[string]string) string {
	if len(env) == 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		b.WriteString(k + "=" + env[k] + "\x00")
	}
	return b.String()
}

// call loads key's script (once; later calls reuse it) and runs it with
// args as the call's arguments.
func (r *runner) call(ctx context.Context, key scriptKey, pol Policy, vars map[string]string, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	ls, err := r.load(ctx, key, pol, vars)
	if err != nil {
		return nil, err
	}
	p := map[string]any{"name": ls.name, "arguments": args}
	if !key.hook && key.budget > 0 {
		// The result is shaped to the budget (RunScript): the executor
		// keeps the whole output for that, up to its larger bound, not
		// only the output cap (script.MetaShape).
		p["_meta"] = map[string]any{"skillgate.dev/shape": true}
	}
	params, _ := json.Marshal(p)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if call == nil {
		call = nopCall{}
	}
	return r.l.opts.Executor.Call(ctx, sdk.CallRequest{Source: ls.source, Method: "tools/call", Params: params}, call)
}

func (r *runner) load(ctx context.Context, key scriptKey, pol Policy, vars map[string]string) (*loadedScript, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: the skills library is closed", ErrNoExecutor)
	}
	if ls := r.loaded[key]; ls != nil {
		r.mu.Unlock()
		<-ls.ready
		if ls.err != nil {
			return nil, ls.err
		}
		return ls, nil
	}
	ls := &loadedScript{source: fmt.Sprintf("skill-script-%d", r.seq.Add(1)), name: toolName(key.entry), ready: make(chan struct{})}
	r.loaded[key] = ls
	r.order = append(r.order, key)
	var evict []*loadedScript
	for len(r.order) > maxLoaded {
		old := r.order[0]
		r.order = r.order[1:]
		evict = append(evict, r.loaded[old])
		delete(r.loaded, old)
	}
	r.mu.Unlock()
	for _, e := range evict {
		go r.unload(e)
	}
	spec, err := r.spec(key, pol, vars, ls.name)
	if err == nil {
		_, err = r.l.opts.Executor.Load(ctx, sdk.LoadRequest{Source: ls.source, Kind: "script", Spec: spec})
	}
	if err != nil {
		ls.err = err
		r.mu.Lock()
		if r.loaded[key] == ls {
			delete(r.loaded, key)
			r.order = slices.DeleteFunc(r.order, func(k scriptKey) bool { return k == key })
		}
		r.mu.Unlock()
	}
	close(ls.ready)
	return ls, err
}

func (r *runner) unload(ls *loadedScript) {
	<-ls.ready
	if ls.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.l.opts.Executor.Unload(ctx, ls.source)
	}
}

// spec is the script executor's spec for a script: the skill (or hooks)
// folder as the tool folder, argv filled from the call's "0", "1", ...
// arguments, and the skill's variables (SKILLGATE_SKILL, what pre hooks
// set) as named variables whose values the spec carries (Environ).
func (r *runner) spec(key scriptKey, pol Policy, vars map[string]string, name string) (json.RawMessage, error) {
	interps := r.l.opts.Interpreters
	if interps == nil {
		interps = defaultInterpreters()
	}
	base, ok := interps[key.runtime]
	if !ok {
		return nil, fmt.Errorf("runtime %s is not allowed for skill scripts", key.runtime)
	}
	argv := slices.Clone(base)
	varNames := slices.Sorted(maps.Keys(vars))
	tool := toolspec.Tool{
		Name:         name,
		Description:  cmpOr(pol.Description, "Script "+key.entry),
		Runtime:      key.runtime,
		Entry:        key.entry,
		Timeout:      toolspec.Duration(pol.Timeout),
		StallTimeout: toolspec.Duration(pol.StallTimeout),
		Env:          append(slices.Clone(pol.Env), varNames...),
		Sandbox:      toolspec.Sandbox{Enabled: pol.Sandbox},
	}
	if key.runtime == toolspec.RuntimeExec && len(argv) == 0 {
		argv = nil
	}
	if !key.hook {
		for i := range MaxArgs {
			tool.Args = append(tool.Args, "{"+strconv.Itoa(i)+"}")
		}
	}
	state := r.l.stateDir(key.dir)
	spec := toolspec.Spec{
		Dir:      key.dir,
		Tool:     tool,
		Limits:   toolspec.Limits{MaxTimeout: toolspec.Duration(r.l.opts.MaxTimeout), Interpreters: map[string][]string{key.runtime: argv}},
		StateDir: filepath.Join(state, "state"),
		CacheDir: filepath.Join(state, "cache"),
	}
	// The policy's env: names and the skill's variables reach the script
	// through the spec, never its command line (which ps shows).
	spec.ResolveEnviron(os.LookupEnv)
	for _, k := range varNames {
		spec.Environ[k] = vars[k]
	}
	return json.Marshal(spec)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// stateDir is where a skill's (or hooks folder's) scripts keep state: a
// folder of the state root named after the skills folder dir, readable
// and collision-free (see stateName). A folder of the old naming (dir
// with every / written _, which col/a/b/s1 and col/a_b/s1 shared) is
// moved to the new name on first use, so no state is lost.
func (l *Library) stateDir(dir string) string {
	base := l.stateBase()
	p := filepath.Join(base, l.stateName(dir))
	l.moveState(filepath.Join(base, strings.Trim(unsafeName().ReplaceAllString(dir, "_"), "_")), p)
	return p
}

// ToolStateDir is where the tool of sk's tool folder toolDir (one of
// sk.ToolDirs) keeps state: under the state root's tools/, a folder named
// after sk's folder as its scripts' is (collision-free, the same across
// a git repository's updates), then one named after the tool folder. A
// folder of the old naming (tools/<sk.ID with / written _>/<folder>,
// which the skills team/x and team_x shared) is moved to the new name on
// first use, so no state is lost.
func (l *Library) ToolStateDir(sk *Skill, toolDir string) string {
	tools := filepath.Join(l.stateBase(), "tools")
	p := filepath.Join(tools, l.stateName(sk.Dir), filepath.Base(toolDir))
	l.moveState(filepath.Join(tools, strings.ReplaceAll(sk.ID, "/", "_"), filepath.Base(toolDir)), p)
	return p
}

// stateBase is the state root: Options.StateDir, else a folder of the
// user's cache.
func (l *Library) stateBase() string {
	if l.opts.StateDir != "" {
		return l.opts.StateDir
	}
	c, err := os.UserCacheDir()
	if err != nil {
		c = os.TempDir()
	}
	return filepath.Join(c, "skillgate", "skills")
}

// stateName is stateName of dir under the library's roots.
func (l *Library) stateName(dir string) string {
	l.rootsMu.Lock()
	roots := slices.Clone(l.roots)
	l.rootsMu.Unlock()
	return stateName(dir, roots)
}

// moveState moves the state folder old to p, its new name, the first
// time p is asked for, when p does not exist yet and old does.
func (l *Library) moveState(old, p string) {
	if _, done := l.stateMoved.LoadOrStore(p, true); done || old == p {
		return
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		return
	}
	if _, err := os.Lstat(old); err != nil {
		return // nothing to move
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		l.log.Warn("skills: the state folder of the old name was not moved; its state is not used", "from", old, "to", p, "err", err)
		return
	}
	if err := os.Rename(old, p); err == nil {
		l.log.Info("skills: state folder moved to its new name", "from", old, "to", p)
	} else {
		l.log.Warn("skills: the state folder of the old name was not moved; its state is not used", "from", old, "to", p, "err", err)
	}
}

// stateName names the state folder of the skills folder dir: a readable
// part (the last elements of its path) and a hash of what identifies it.
// That is its exact path, except for a folder of a git repository's
// checkout (a root of source "git <url>@<commit>"), which is identified
// by the repository's URL and the path inside the checkout: the same
// across the commits an update moves it to.
func stateName(dir string, roots []root) string {
	id, readable := dir, dir
	var best root
	for _, r := range roots {
		if rel, err := filepath.Rel(r.dir, dir); err == nil && filepath.IsLocal(rel) || dir == r.dir {
			if len(r.dir) > len(best.dir) {
				best = r
			}
		}
	}
	if url, ok := strings.CutPrefix(best.source, "git "); ok {
		if i := strings.LastIndexByte(url, '@'); i >= 0 {
			url = url[:i]
		}
		rel, _ := filepath.Rel(best.dir, dir)
		rel = filepath.ToSlash(rel)
		id = "git\x00" + url + "\x00" + rel
		readable = strings.TrimSuffix(path.Base(strings.TrimRight(url, "/")), ".git") + "/" + rel
	}
	sum := sha256.Sum256([]byte(id))
	parts := strings.Split(filepath.ToSlash(readable), "/")
	tail := strings.Join(parts[max(0, len(parts)-2):], "_")
	tail = strings.Trim(unsafeName().ReplaceAllString(tail, "_"), "_")
	if len(tail) > 48 {
		tail = tail[len(tail)-48:]
	}
	return tail + "-" + hex.EncodeToString(sum[:8])
}

func (r *runner) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	all := slices.Collect(maps.Values(r.loaded))
	r.loaded = map[scriptKey]*loadedScript{}
	r.order = nil
	r.mu.Unlock()
	for _, ls := range all {
		r.unload(ls)
	}
}

// nopCall drops progress and notifications of a run nobody listens to.
type nopCall struct{}

func (nopCall) Progress(sdk.Progress) error   { return nil }
func (nopCall) Notify(sdk.Notification) error { return nil }
func (nopCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("skill scripts cannot call tools")
}
func (nopCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("no client to ask")
}
