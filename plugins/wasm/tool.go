package wasm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// exitUnloaded is the exit code of the instances a closed tool stops.
const exitUnloaded = 0xeffffff0

// tool is one loaded wasm tool: its own wazero runtime (the memory limit is
// per runtime), the compiled module, and for a reactor its instance pool.
type tool struct {
	source string
	cfg    *config
	log    *slog.Logger

	rt       wazero.Runtime
	compiled wazero.CompiledModule
	modCfg   wazero.ModuleConfig // shared part of every instance's config
	roots    []*os.Root          // mounts, open for the tool's lifetime
	pool     *pool               // reactor only
	noResult bool                // the reactor's function returns nothing
	slots    chan struct{}       // command: caps calls at once (limits.concurrency)

	mu      sync.Mutex
	calls   int
	retired bool
	idle    chan struct{} // closed when retired and no call is left

	// halt stops the calls still running when the grace of a retire is
	// over. Closing a runtime under a running guest races inside wazero
	// (its file table is freed while the guest reads it); a cancelled
	// context makes the guest exit at its next check and free its own
	// resources, so calls are halted first and the runtime closed after.
	halted context.Context
	halt   context.CancelFunc
}

// newTool compiles a tool's module and, for a reactor, starts and
// initializes its first instance, so a broken module fails Load.
func newTool(ctx context.Context, source string, cfg *config, cache wazero.CompilationCache, maxInstances int, log *slog.Logger) (_ *tool, err error) {
	t := &tool{source: source, cfg: cfg, log: log.With("source", source, "tool", cfg.name), idle: make(chan struct{})}
	t.halted, t.halt = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			t.close(ctx)
		}
	}()

	bin, err := readEntry(cfg.dir, cfg.entry)
	if err != nil {
		return nil, err
	}
	t.rt = wazero.NewRuntimeWithConfig(ctx, runtimeConfig(cache).WithMemoryLimitPages(cfg.memPages))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, t.rt); err != nil {
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	t.compiled, err = t.rt.CompileModule(ctx, bin)
	if err != nil {
		return nil, fmt.Errorf("%w: compile %s: %v", sdk.ErrInvalidSpec, cfg.entry, err)
	}
	if err := t.checkModule(); err != nil {
		return nil, err
	}

	fsc := wazero.NewFSConfig()
	for _, m := range cfg.mounts {
		root, err := openMount(cfg.dir, m)
		if err != nil {
			return nil, fmt.Errorf("%w: wasm.mounts %s: %v", sdk.ErrInvalidSpec, m.guest, err)
		}
		t.roots = append(t.roots, root)
		// An os.Root's FS is read-only and cannot be left by ".." or a
		// symlink, unlike wazero's own directory mounts.
		fsc = fsc.WithFSMount(root.FS(), m.guest)
	}
	mc := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithFSConfig(fsc).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	for _, kv := range cfg.env {
		mc = mc.WithEnv(kv[0], kv[1])
	}
	t.modCfg = mc

	if cfg.style == StyleCommand && cfg.concurrency > 0 {
		t.slots = make(chan struct{}, cfg.concurrency)
	}
	if cfg.style == StyleCommand {
		// Instantiate once without running _start: this catches what only
		// instantiation checks (WASI imports of the wrong signature, data
		// segments out of bounds) at Load rather than on every call.
		mod, err := t.rt.InstantiateModule(ctx, t.compiled, mc)
		if err != nil {
			return nil, fmt.Errorf("%w: instantiate %s: %s", sdk.ErrInvalidSpec, cfg.entry, describe(err))
		}
		_ = mod.Close(ctx)
	}
	if cfg.style == StyleReactor {
		n := maxInstances
		if cfg.concurrency > 0 {
			n = cfg.concurrency
		}
		t.pool = newPool(t, n)
		ictx, cancel := context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
		in, err := t.pool.get(ictx)
		if err != nil {
			return nil, fmt.Errorf("%w: initialize %s: %v", sdk.ErrInvalidSpec, cfg.entry, err)
		}
		t.pool.put(in)
	}
	return t, nil
}

// readEntry reads the module file without leaving the tool folder, symlinks
// included.
func readEntry(dir, entry string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: tool folder: %v", sdk.ErrInvalidSpec, err)
	}
	defer root.Close()
	bin, err := root.ReadFile(entry)
	if err != nil {
		hint := ""
		if errors.Is(err, os.ErrNotExist) {
			hint = " (build it first, e.g. GOOS=wasip1 GOARCH=wasm go build -o " + entry + ")"
		}
		return nil, fmt.Errorf("%w: entry %s: %v%s", sdk.ErrInvalidSpec, entry, unwrapPath(err), hint)
	}
	return bin, nil
}

// checkModule makes sure the module has what its style needs and imports
// nothing but WASI, so a bad module fails Load with a useful message.
func (t *tool) checkModule() error {
	var foreign []string
	for _, f := range t.compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != wasi_snapshot_preview1.ModuleName {
			foreign = append(foreign, mod+"."+name)
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		if len(foreign) > 5 {
			foreign = append(foreign[:5], "...")
		}
		return fmt.Errorf("%w: %s imports %s; only %s is provided (build for GOOS=wasip1 or wasm32-wasip1)",
			sdk.ErrInvalidSpec, t.cfg.entry, strings.Join(foreign, ", "), wasi_snapshot_preview1.ModuleName)
	}
	exports := t.compiled.ExportedFunctions()
	switch t.cfg.style {
	case StyleCommand:
		if _, ok := exports["_start"]; !ok {
			hint := ""
			if _, ok := exports["_initialize"]; ok {
				hint = " (it looks like a reactor: set wasm.style: reactor)"
			}
			return fmt.Errorf("%w: %s exports no _start, so it is not a WASI command module%s", sdk.ErrInvalidSpec, t.cfg.entry, hint)
		}
	case StyleReactor:
		f, ok := exports[t.cfg.function]
		if !ok {
			return fmt.Errorf("%w: %s exports no function %q (wasm.function); it exports %s",
				sdk.ErrInvalidSpec, t.cfg.entry, t.cfg.function, exportList(exports))
		}
		res := f.ResultTypes()
		switch {
		case len(f.ParamTypes()) != 0 || len(res) > 1 || (len(res) == 1 && res[0] != api.ValueTypeI32):
			return fmt.Errorf("%w: %s: function %q must take no parameters and return an i32 status (or nothing), e.g. //go:wasmexport %s with func() int32",
				sdk.ErrInvalidSpec, t.cfg.entry, t.cfg.function, t.cfg.function)
		case len(res) == 0:
			t.noResult = true
		}
	}
	return nil
}

func exportList(m map[string]api.FunctionDefinition) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "no functions"
	}
	return strings.Join(names, ", ")
}

// acquire counts a call in; false means the tool is being replaced or
// unloaded.
func (t *tool) acquire() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.retired {
		return false
	}
	t.calls++
	return true
}

func (t *tool) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls--
	if t.retired && t.calls == 0 {
		close(t.idle)
	}
}

// retire refuses new calls, lets the calls in flight finish within grace,
// then closes the tool, stopping whatever still runs.
func (t *tool) retire(ctx context.Context, grace time.Duration) {
	t.mu.Lock()
	if !t.retired {
		t.retired = true
		if t.calls == 0 {
			close(t.idle)
		}
	}
	t.mu.Unlock()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-t.idle:
	case <-timer.C:
	case <-ctx.Done():
	}
	t.halt()
	select {
	case <-t.idle:
	case <-time.After(haltWait):
		t.log.Warn("wasm calls did not stop after their context ended; closing the runtime under them", "wait", haltWait)
	}
	t.close(context.WithoutCancel(ctx))
}

// haltWait bounds how long a retire waits for halted calls to return.
const haltWait = 5 * time.Second

// close releases the runtime (and with it every instance) and the mounts.
func (t *tool) close(ctx context.Context) {
	t.halt()
	if t.pool != nil {
		t.pool.close()
	}
	if t.rt != nil {
		if err := t.rt.CloseWithExitCode(ctx, exitUnloaded); err != nil {
			t.log.Warn("close wasm runtime", "err", err)
		}
	}
	for _, r := range t.roots {
		_ = r.Close()
	}
	t.roots = nil
}

// call runs one tools/call with its arguments and returns the
// CallToolResult.
func (t *tool) call(ctx context.Context, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	cctx, cancel := context.WithTimeout(ctx, t.cfg.timeout)
	defer cancel()
	defer context.AfterFunc(t.halted, cancel)()
	var (
		res json.RawMessage
		err error
	)
	if t.cfg.style == StyleReactor {
		res, err = t.callReactor(ctx, cctx, args, call)
	} else {
		res, err = t.callCommand(ctx, cctx, args, call)
	}
	if t.halted.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%w: tool %q was unloaded while the call ran", sdk.ErrUnavailable, t.cfg.name)
	}
	return res, err
}

// callCommand instantiates the command module for this call alone: args on
// stdin, result on stdout, progress and logs on stderr.
func (t *tool) callCommand(ctx, cctx context.Context, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if t.slots != nil {
		select {
		case t.slots <- struct{}{}:
			defer func() { <-t.slots }()
		case <-cctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return errorResult(StatusTimeout, fmt.Sprintf("%s did not get a turn within its %s timeout (%d calls at once)",
				t.cfg.name, t.cfg.timeout, cap(t.slots)), &capBuffer{}, &stderrLines{}), nil
		}
	}
	out := &capBuffer{max: t.cfg.outputCap}
	errw := &stderrLines{call: call, logger: t.cfg.name}
	mc := t.modCfg.
		WithArgs(t.cfg.entry).
		WithStdin(bytes.NewReader(args)).
		WithStdout(out).
		WithStderr(errw)
	mod, err := t.rt.InstantiateModule(cctx, t.compiled, mc)
	if err != nil {
		errw.flush()
		return t.failed(ctx, cctx, err, nil, out, errw)
	}
	_, err = mod.ExportedFunction("_start").Call(cctx)
	errw.finish()
	if err == nil || exitCode(err) == 0 {
		_ = mod.Close(cctx)
		return successResult(out), nil
	}
	res, rerr := t.failed(ctx, cctx, err, mod.Memory(), out, errw)
	_ = mod.Close(context.WithoutCancel(cctx))
	return res, rerr
}

// callReactor runs the call on a warm instance of the pool.
func (t *tool) callReactor(ctx, cctx context.Context, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	in, err := t.pool.get(cctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cctx.Err() != nil {
			return errorResult(StatusTimeout, fmt.Sprintf("no instance of %s became free within the %s timeout (%d in use)",
				t.cfg.name, t.cfg.timeout, t.pool.max), &capBuffer{}, &stderrLines{}), nil
		}
		return nil, fmt.Errorf("%w: start an instance of %s: %v", sdk.ErrUnavailable, t.cfg.name, err)
	}
	in.stdin.Reset(args)
	in.stdout.Reset()
	in.stderr.reset(call)
	results, err := in.fn.Call(cctx)
	in.stderr.finish()
	in.stderr.call = nil
	if err != nil {
		// The instance trapped, exited or was closed: it is not reused.
		in.dead = true
		res, rerr := t.failed(ctx, cctx, err, in.mod.Memory(), &in.stdout, &in.stderr)
		t.pool.put(in)
		return res, rerr
	}
	code := uint32(0)
	if !t.noResult && len(results) == 1 {
		code = api.DecodeU32(results[0])
	}
	var res json.RawMessage
	if code != 0 {
		res = errorResult(StatusError, fmt.Sprintf("%s returned %d", t.cfg.function, int32(code)), &in.stdout, &in.stderr)
	} else {
		res = successResult(&in.stdout)
	}
	t.pool.put(in)
	return res, nil
}

// failed turns a failed run into a result with a status, or into the
// caller's context error when the client went away.
func (t *tool) failed(ctx, cctx context.Context, err error, mem api.Memory, out *capBuffer, errw *stderrLines) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case exitUnloaded:
			return nil, fmt.Errorf("%w: tool %q was unloaded while the call ran", sdk.ErrUnavailable, t.cfg.name)
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			if cctx.Err() != nil {
				return errorResult(StatusTimeout, fmt.Sprintf("%s ran longer than its %s timeout and was stopped (raise timeout in tool.yaml if it needs longer)",
					t.cfg.name, t.cfg.timeout), out, errw), nil
			}
		}
	}
	limit := uint64(t.cfg.memPages) * pageSize
	if size, ok := memSize(mem); ok && nearLimit(size, limit, errw.tailText()) {
		return errorResult(StatusMemoryLimit, fmt.Sprintf("%s used %s of its %s memory limit and failed (%v); raise wasm.memory_limit in tool.yaml if it needs more",
			t.cfg.name, sizeText(size), sizeText(limit), describe(err)), out, errw), nil
	}
	if exit != nil {
		return errorResult(StatusError, fmt.Sprintf("%s exited with code %d", t.cfg.name, exit.ExitCode()), out, errw), nil
	}
	return errorResult(StatusTrap, fmt.Sprintf("%s failed: %v", t.cfg.name, describe(err)), out, errw), nil
}

// nearLimit guesses whether a failure came from the memory limit: the
// guest's memory is within one growth step of it (Go grows its heap 4 MiB
// at a time; less for small limits), or the guest said it ran out of
// memory.
func nearLimit(size, limit uint64, stderr string) bool {
	if strings.Contains(stderr, "out of memory") {
		return true
	}
	step := min(max(limit/8, 4<<20+pageSize), limit/2)
	return size+step > limit
}

func memSize(mem api.Memory) (size uint64, ok bool) {
	if mem == nil {
		return 0, false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return uint64(mem.Size()), true
}

func exitCode(err error) int64 {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return int64(exit.ExitCode())
	}
	return -1
}

// describe shortens wazero's errors: its traps carry a wasm stack trace
// that is no use to a model.
func describe(err error) string {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return fmt.Sprintf("exit code %d", exit.ExitCode())
	}
	s := err.Error()
	if i := strings.Index(s, "\nwasm stack trace:"); i >= 0 {
		s = s[:i]
	}
	return s
}

func sizeText(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%dKiB", n>>10)
	}
}
