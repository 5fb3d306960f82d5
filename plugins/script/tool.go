package script

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/argcheck"
	"github.com/skillgate/skillgate/plugins/script/internal/proc"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// tool is one loaded tool folder.
type tool struct {
	e      *Executor
	source string
	spec   *toolspec.Spec

	interp   []string          // resolved interpreter argv (empty for exec)
	nameJSON []byte            // the tool's name as a JSON string
	args     *argcheck.Checker // its inputSchema, checked before a call runs
	names    *argNames         // the argument names it takes, nil for any
	timeout  time.Duration
	stall    time.Duration
	cap      int
	slots    chan struct{} // per-tool concurrency, nil when uncapped
	cred     *proc.Credential

	depsOnce sync.Mutex
	deps     *installed // nil until installed

	state stateFile

	mu      sync.Mutex
	worker  *conn              // the persistent process, when running
	retired map[*conn]struct{} // replaced processes still finishing calls
	closed  bool

	// wiring holds the variables of the services the tool requires, as the
	// gateway last passed them with a call (see MetaEnv); processes
	// started from then on get them.
	wiring atomic.Pointer[map[string]string]
}

func newTool(e *Executor, source string, spec *toolspec.Spec) (*tool, error) {
	t := &tool{e: e, source: source, spec: spec}
	t.nameJSON, _ = json.Marshal(spec.Tool.Name)
	t.args = argcheck.New(spec.Tool.Name, spec.Tool.InputSchema)
	t.names = newArgNames(spec.Tool.Name, spec.Tool.InputSchema)
	lim := spec.Limits
	t.timeout = pick(spec.Tool.Timeout.Std(), lim.Timeout.Std(), DefaultTimeout)
	if m := lim.MaxTimeout.Std(); m > 0 && t.timeout > m {
		t.timeout = m
	}
	t.stall = pick(spec.Tool.StallTimeout.Std(), lim.StallTimeout.Std(), DefaultStallTimeout)
	t.cap = int(lim.OutputCap)
	if t.cap <= 0 {
		t.cap = DefaultOutputCap
	}
	if lim.Concurrency > 0 {
		t.slots = make(chan struct{}, lim.Concurrency)
	}
	interps := e.interpreters
	if lim.Interpreters != nil {
		interps = lim.Interpreters
	}
	argv, ok := interps[spec.Tool.Runtime]
	if !ok {
		return nil, fmt.Errorf("runtime %s is not allowed here (the allowed ones: %s); ask the gateway's admin to add it to the interpreter allowlist",
			spec.Tool.Runtime, strings.Join(keys(interps), ", "))
	}
	if len(argv) == 0 && spec.Tool.Runtime != toolspec.RuntimeExec {
		return nil, fmt.Errorf("runtime %s has an empty interpreter argv", spec.Tool.Runtime)
	}
	if len(argv) > 0 {
		path, err := resolveInterpreter(spec.Tool.Runtime, argv[0])
		if err != nil {
			return nil, err
		}
		t.interp = append([]string{path}, argv[1:]...)
	}
	if spec.Limits.SandboxUser != "" {
		uid, gid, _ := spec.Limits.SandboxIDs()
		t.cred = &proc.Credential{UID: uid, GID: gid}
	}
	if spec.Tool.Sandbox.Enabled {
		if err := sandboxAvailable(); err != nil {
			return nil, err
		}
	}
	if spec.Tool.Ulimits.Processes > 0 && runningAsRoot() && (t.cred == nil || !spec.Tool.Sandbox.Enabled) {
		e.log.Warn("ulimits.processes does not bind processes of root; enable the sandbox and set limits.sandbox_user", "source", source)
	}
	if spec.Tool.Ulimits != (toolspec.Ulimits{}) {
		if err := ulimitsAvailable(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(spec.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	if t.cred != nil && spec.Tool.Sandbox.Enabled {
		_ = os.Chown(spec.StateDir, int(t.cred.UID), int(t.cred.GID))
	}
	t.state.path = filepath.Join(spec.StateDir, "state.json")
	return t, nil
}

func pick(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// interpCache remembers resolved interpreters: resolving python costs a
// process start.
var interpCache sync.Map // name -> string

// resolveInterpreter finds the interpreter's real binary. Python is asked
// for sys.executable, so that version-manager shims (pyenv) are not run on
// every call and the sandbox can bind the real installation.
func resolveInterpreter(runtime, name string) (string, error) {
	key := runtime + "\x00" + name
	if v, ok := interpCache.Load(key); ok {
		return v.(string), nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("runtime %s: interpreter %q is not installed (not found in PATH); install it or point the interpreter allowlist at it", runtime, name)
	}
	if runtime == toolspec.RuntimePython {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "-c", "import sys; print(sys.executable)").Output()
		if p := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(p) {
			path = p
		}
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	interpCache.Store(key, path)
	return path, nil
}

// close stops the persistent process, if any, and those it replaced, and
// makes later calls fail.
func (t *tool) close() {
	t.mu.Lock()
	t.closed = true
	stop := slices.Collect(maps.Keys(t.retired))
	if t.worker != nil {
		stop = append(stop, t.worker)
	}
	t.worker, t.retired = nil, nil
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range stop {
		wg.Go(c.stop)
	}
	wg.Wait()
}

// slot is an executor-wide process slot a call holds; free releases it,
// once.
type slot struct{ release func() }

func (s *slot) free() {
	if s.release != nil {
		s.release()
		s.release = nil
	}
}

// call runs one tools/call; args is a JSON object.
func (t *tool) call(ctx context.Context, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if t.slots != nil {
		select {
		case t.slots <- struct{}{}:
			defer func() { <-t.slots }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	release, err := t.e.acquire(ctx)
	if err != nil {
		return nil, err
	}
	sl := &slot{release: release}
	defer sl.free()

	deps, res := t.dependencies(ctx, call)
	if res != nil {
		return res, nil
	}
	if t.spec.Tool.ProtocolOrDefault() == toolspec.ProtocolJSONRPC {
		if t.spec.Tool.ModeOrDefault() == toolspec.ModePersistent {
			// The slot covered installing dependencies. A persistent
			// process is one per tool and serves calls side by side: a
			// slot per call would let a few slow calls on it block every
			// other tool, and a slot per process would let nine
			// persistent tools starve the rest.
			sl.free()
			return t.callPersistent(ctx, args, deps, call)
		}
		return t.callOnce(ctx, args, deps, call)
	}
	return t.callSimple(ctx, args, deps, call)
}

// argv builds the command line: the sandbox and limit wrappers, the
// interpreter, the entry (checked again against the folder) and the args
// with {name} placeholders replaced.
func (t *tool) argv(args json.RawMessage, deps *installed) ([]string, error) {
	entry, err := toolspec.Resolve(t.spec.Dir, t.spec.Tool.Entry)
	if err != nil {
		return nil, fmt.Errorf("entry: %v", err)
	}
	var argv []string
	argv = append(argv, t.ulimitArgs()...)
	if t.spec.Tool.Sandbox.Enabled {
		argv = append(argv, t.sandboxArgs(deps)...)
	}
	interp := t.interp
	if deps != nil && deps.python != "" {
		interp = append([]string{deps.python}, interp[1:]...)
	}
	argv = append(argv, interp...)
	argv = append(argv, entry)
	return append(argv, expandArgs(t.spec.Tool.Args, args)...), nil
}

// expandArgs replaces each "{name}" element with the argument's value: a
// string as it is, anything else as JSON; an absent argument drops the
// element. Nothing is ever interpreted by a shell.
func expandArgs(tmpl []string, args json.RawMessage) []string {
	if len(tmpl) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(args, &obj)
	out := make([]string, 0, len(tmpl))
	for _, a := range tmpl {
		if len(a) < 3 || a[0] != '{' || a[len(a)-1] != '}' || strings.ContainsAny(a[1:len(a)-1], "{} ") {
			out = append(out, a)
			continue
		}
		v, ok := obj[a[1:len(a)-1]]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out = append(out, s)
		} else {
			out = append(out, string(v))
		}
	}
	return out
}

// procConfig is the common part of starting the tool's process.
func (t *tool) procConfig(argv []string, deps *installed) proc.Config {
	return proc.Config{
		Argv:       argv,
		Env:        t.env(deps),
		Dir:        t.spec.Dir,
		Stdin:      true,
		Grace:      stopGrace,
		Credential: t.credential(),
	}
}

func (t *tool) credential() *proc.Credential {
	if t.spec.Tool.Sandbox.Enabled {
		return t.cred
	}
	return nil
}

// supervise waits for p to exit, enforcing the call's timeout and stall
// timeout and the caller's cancellation. It returns the status that ended
// the wait (statusOK when the process exited by itself). done, when not
// nil, also ends the wait (with statusOK).
func (t *tool) supervise(ctx context.Context, p *proc.Process, done <-chan struct{}) string {
	deadline := time.NewTimer(t.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(stallTick(t.stall))
	defer tick.Stop()
	for {
		select {
		case <-p.Done():
			return statusOK
		case <-done:
			return statusOK
		case <-ctx.Done():
			return statusCanceled
		case <-deadline.C:
			return statusTimeout
		case <-tick.C:
			if t.stallWatched() && p.Idle() >= t.stall {
				return statusStalled
			}
		}
	}
}

// stallWatched says whether calls can stall: a stall timeout at or past
// the call timeout never comes first.
func (t *tool) stallWatched() bool { return t.stall > 0 && t.stall < t.timeout }

func stallTick(stall time.Duration) time.Duration {
	d := stall / 10
	return min(max(d, 10*time.Millisecond), time.Second)
}
