package wasm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/argcheck"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// Module styles, as tool.yaml's wasm.style names them.
const (
	// StyleCommand is a WASI command module: _start runs once per call.
	StyleCommand = toolspec.StyleCommand
	// StyleReactor is a reactor module: _initialize runs once per instance,
	// then each call goes to an exported function of a warm instance.
	StyleReactor = toolspec.StyleReactor
)

// Defaults applied when neither tool.yaml nor the gateway's limits set one.
const (
	// DefaultTimeout bounds one call.
	DefaultTimeout = 60 * time.Second
	// DefaultMemoryLimit caps one instance's linear memory.
	DefaultMemoryLimit = 256 << 20
	// DefaultOutputCap is how much stdout a call keeps; the rest is
	// dropped and the result says so.
	DefaultOutputCap = 1 << 20
)

const pageSize = 64 << 10

// config is a loaded tool's resolved settings.
type config struct {
	dir         string
	name        string
	definition  json.RawMessage   // the MCP Tool object
	args        *argcheck.Checker // the inputSchema, checked before a call runs
	entry       string            // relative to dir
	style       string
	function    string
	memPages    uint32
	timeout     time.Duration
	outputCap   int
	concurrency int // 0: the executor's default
	env         [][2]string
	mounts      []mount
}

// mount is a directory the guest sees, read-only, at guest. Exactly one of
// abs (an absolute host path) and rel (relative to the tool folder) is set.
type mount struct {
	abs, rel string
	guest    string
}

// parseSpec decodes LoadRequest.Spec (a toolspec.Spec) and resolves it
// against the executor's environment. Every problem is reported, joined
// into one error wrapping sdk.ErrInvalidSpec.
func parseSpec(raw json.RawMessage, environ func(string) (string, bool)) (*config, error) {
	s, err := toolspec.ParseSpec(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", sdk.ErrInvalidSpec, err)
	}
	if s.Environ != nil {
		environ = s.Lookup // resolved by the gateway: out of process we do not inherit its environment
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	t := &s.Tool
	if t.Runtime != toolspec.RuntimeWasm {
		bad("runtime %q is not wasm", t.Runtime)
	}
	w := t.Wasm
	if w == nil {
		w = &toolspec.Wasm{}
	}
	c := &config{
		dir: s.Dir, name: t.Name, definition: t.Definition(), args: argcheck.New(t.Name, t.InputSchema), entry: t.Entry,
		style: StyleCommand, function: w.Function,
		memPages: DefaultMemoryLimit / pageSize, timeout: DefaultTimeout, outputCap: DefaultOutputCap,
		concurrency: s.Limits.Concurrency,
	}
	if !strings.HasSuffix(t.Entry, ".wasm") {
		bad("entry %q must be a .wasm module", t.Entry)
	}
	if w.Style == StyleReactor {
		c.style = StyleReactor
	}
	switch {
	case t.Timeout > 0:
		c.timeout = t.Timeout.Std()
	case s.Limits.Timeout > 0:
		c.timeout = s.Limits.Timeout.Std()
	}
	if m := s.Limits.MaxTimeout.Std(); m > 0 && c.timeout > m {
		c.timeout = m
	}
	if s.Limits.OutputCap > 0 {
		c.outputCap = int(min(s.Limits.OutputCap, 1<<30))
	}
	if w.MemoryLimit > 0 {
		pages := (int64(w.MemoryLimit) + pageSize - 1) / pageSize
		if pages > 65536 {
			bad("wasm.memory_limit %d is above 4GiB, the most a 32-bit module can address", w.MemoryLimit)
		} else {
			c.memPages = uint32(pages)
		}
	}

	// The guest's environment: variables of the executor's own environment
	// that env and secrets name (absent ones are left out), then wasm.env's
	// literal values.
	for _, names := range [][]string{t.Env, t.Secrets} {
		for _, k := range names {
			if v, ok := environ(k); ok {
				c.env = append(c.env, [2]string{k, v})
			}
		}
	}
	for k, v := range w.Env {
		if strings.ContainsRune(v, 0) {
			bad("wasm.env.%s holds a NUL byte", k)
			continue
		}
		c.env = append(c.env, [2]string{k, v})
	}

	guests := map[string]bool{}
	for i, m := range w.Mounts {
		mt := mount{guest: m.At}
		if filepath.IsAbs(m.Path) {
			mt.abs = filepath.Clean(m.Path)
			if mt.guest == "" {
				mt.guest = filepath.ToSlash(mt.abs)
			}
		} else {
			mt.rel = filepath.Clean(m.Path)
			if mt.guest == "" {
				mt.guest = "/" + filepath.ToSlash(mt.rel)
			}
		}
		mt.guest = path.Clean(mt.guest)
		if guests[mt.guest] {
			bad("wasm.mounts[%d]: %s is mounted twice", i, mt.guest)
			continue
		}
		guests[mt.guest] = true
		c.mounts = append(c.mounts, mt)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", sdk.ErrInvalidSpec, strings.Join(errs, "; "))
	}
	return c, nil
}

// openMount opens a mount's directory as an os.Root: a relative one through
// the tool folder's root, so neither ".." nor a symlink leads out of it.
func openMount(dir string, m mount) (*os.Root, error) {
	if m.abs != "" {
		return checkDir(os.OpenRoot(m.abs))
	}
	folder, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer folder.Close()
	return checkDir(folder.OpenRoot(m.rel))
}

func checkDir(r *os.Root, err error) (*os.Root, error) {
	var pe *os.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory") {
		return nil, fmt.Errorf("%s is a file; a wasm guest can only be given directories (mount its folder)", pe.Path)
	}
	return r, err
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func writeJSON(b interface{ Write([]byte) (int, error) }, v any) {
	j, _ := json.Marshal(v)
	_, _ = b.Write(j)
}
