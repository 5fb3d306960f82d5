package toolstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/names"

	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/plugins/wasm"
)

// VersionsDir is the folder of a tools dir that holds old versions. The
// gateway's watcher ignores every name starting with a dot.
const VersionsDir = ".versions"

// Limits on what one change may write.
const (
	// DefaultKeep is how many old versions of a tool are kept.
	DefaultKeep = 20
	// MaxFiles bounds the files of one change.
	MaxFiles = 1000
	// MaxBytes bounds the total size of one change's files.
	MaxBytes = 16 << 20
)

// Builder compiles srcDir's sources (lang "go" or "rust") into the wasm
// module outPath of the given style.
type Builder func(ctx context.Context, lang, srcDir, outPath, style string) error

// Store manages the tool folders of one tools dir. Its methods are safe
// for concurrent use, and serialized with other processes (the CLI) by a
// lock file.
type Store struct {
	// Dir is the tools dir.
	Dir string
	// Keep is how many old versions of a tool are kept; 0 means DefaultKeep.
	Keep int
	// Build compiles wasm tools; nil means wasm.BuildGo and wasm.BuildRust.
	Build Builder

	mu sync.Mutex
}

// New returns a store for the tools dir dir. It touches nothing.
func New(dir string) *Store { return &Store{Dir: dir} }

// Change is what Register and Update write.
type Change struct {
	// Tool holds tool.yaml's keys as a JSON object (input_schema, runtime,
	// entry, ...); "name" may be left out. Nil keeps the current tool.yaml
	// (Update) or takes Files["tool.yaml"].
	Tool json.RawMessage
	// Files are added or replaced, by path relative to the tool folder.
	Files map[string]string
	// Remove lists files (or folders) to delete from the current version.
	Remove []string
	// Build compiles the folder's sources into the wasm entry: "go" or
	// "rust". An Update of a wasm tool that touches .go, go.mod, go.sum,
	// .rs or Cargo.toml files rebuilds on its own.
	Build string
}

// Version is one version of a tool.
type Version struct {
	// N numbers the versions from 1, in the order they were written.
	N int `json:"version"`
	// Live marks the version being served (the tool's folder).
	Live bool `json:"live,omitempty"`
	// Time is when the version was written.
	Time time.Time `json:"time"`
	// Description, ToolVersion and Runtime come from its tool.yaml.
	Description string `json:"description,omitempty"`
	ToolVersion string `json:"tool_version,omitempty"`
	Runtime     string `json:"runtime,omitempty"`
	// Dir is the version's folder.
	Dir string `json:"dir"`
}

// CheckName reports whether name can be a managed tool's name (and folder).
func CheckName(name string) error {
	if !names.Valid(name) {
		return fmt.Errorf("%w: tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", ErrBadInput, name)
	}
	return nil
}

func (s *Store) live(name string) string    { return filepath.Join(s.Dir, name) }
func (s *Store) history(name string) string { return filepath.Join(s.Dir, VersionsDir, name) }

// lock serializes changes within this process and with other processes.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
		s.mu.Unlock()
		return nil, fmt.Errorf("tools dir %s does not exist; create it or fix tools.dirs", s.Dir)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, VersionsDir), 0o755); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	unlock, err := lockFile(filepath.Join(s.Dir, VersionsDir, ".lock"))
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	return func() { unlock(); s.mu.Unlock() }, nil
}

// Register writes a new tool. It fails with ErrExists when the tool has a
// live folder (use Update); a deleted tool's history is continued.
func (s *Store) Register(ctx context.Context, name string, c Change) (Version, error) {
	if err := CheckName(name); err != nil {
		return Version{}, err
	}
	p, err := s.plan(name, "", c)
	if err != nil {
		return Version{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Version{}, err
	}
	defer unlock()
	if _, err := os.Lstat(s.live(name)); err == nil {
		return Version{}, fmt.Errorf("%w: %s (in %s); update it instead", ErrExists, name, s.Dir)
	}
	tmp, err := s.prepare(ctx, p)
	if err != nil {
		return Version{}, err
	}
	return s.install(name, tmp)
}

// Update writes a new version of an existing tool: the current folder with
// c applied. The current version is kept.
func (s *Store) Update(ctx context.Context, name string, c Change) (Version, error) {
	if err := CheckName(name); err != nil {
		return Version{}, err
	}
	if fi, err := os.Stat(s.live(name)); err != nil || !fi.IsDir() {
		return Version{}, fmt.Errorf("%w: %s (in %s); register it first", ErrNotFound, name, s.Dir)
	}
	p, err := s.plan(name, s.live(name), c)
	if err != nil {
		return Version{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Version{}, err
	}
	defer unlock()
	tmp, err := s.prepare(ctx, p)
	if err != nil {
		return Version{}, err
	}
	return s.install(name, tmp)
}

// Delete removes the tool's live folder, keeping it as its newest version,
// which Rollback restores.
func (s *Store) Delete(name string) (Version, error) {
	if err := CheckName(name); err != nil {
		return Version{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Version{}, err
	}
	defer unlock()
	live := s.live(name)
	if fi, err := os.Stat(live); err != nil || !fi.IsDir() {
		return Version{}, fmt.Errorf("%w: %s (in %s)", ErrNotFound, name, s.Dir)
	}
	n, err := s.newest(name)
	if err != nil {
		return Version{}, err
	}
	if err := os.MkdirAll(s.history(name), 0o755); err != nil {
		return Version{}, err
	}
	to := filepath.Join(s.history(name), strconv.Itoa(n+1))
	if err := os.Rename(live, to); err != nil {
		return Version{}, fmt.Errorf("delete %s: %w", name, err)
	}
	s.prune(name)
	return describe(n+1, false, to), nil
}

// Versions lists the tool's versions, oldest first; the live one last.
func (s *Store) Versions(name string) ([]Version, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	nums, err := s.archived(name)
	if err != nil {
		return nil, err
	}
	var out []Version
	for _, n := range nums {
		out = append(out, describe(n, false, filepath.Join(s.history(name), strconv.Itoa(n))))
	}
	if fi, err := os.Stat(s.live(name)); err == nil && fi.IsDir() {
		n := 1
		if len(nums) > 0 {
			n = nums[len(nums)-1] + 1
		}
		out = append(out, describe(n, true, s.live(name)))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s (no folder and no versions in %s)", ErrNotFound, name, s.Dir)
	}
	return out, nil
}

// Rollback makes old version n live again, as a new version (so the
// rollback can be rolled back too). n == 0 means the newest kept version,
// the one before the live folder. It also restores a deleted tool.
func (s *Store) Rollback(ctx context.Context, name string, n int) (Version, error) {
	if err := CheckName(name); err != nil {
		return Version{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Version{}, err
	}
	defer unlock()
	nums, err := s.archived(name)
	if err != nil {
		return Version{}, err
	}
	if len(nums) == 0 {
		return Version{}, fmt.Errorf("%w: %s has no earlier version to roll back to", ErrNotFound, name)
	}
	if n == 0 {
		n = nums[len(nums)-1]
	}
	if !slices.Contains(nums, n) {
		return Version{}, fmt.Errorf("%w: %s has no version %d; kept versions are %v", ErrNotFound, name, n, nums)
	}
	src := filepath.Join(s.history(name), strconv.Itoa(n))
	tmp, err := s.tempDir(name)
	if err != nil {
		return Version{}, err
	}
	if err := copyTree(src, tmp); err != nil {
		os.RemoveAll(tmp)
		return Version{}, fmt.Errorf("roll back %s to version %d: %w", name, n, err)
	}
	if _, err := toolspec.Load(tmp); err != nil {
		os.RemoveAll(tmp)
		return Version{}, fmt.Errorf("roll back %s: version %d is not a valid tool any more: %w", name, n, relabel(err, tmp, src))
	}
	return s.install(name, tmp)
}

// plan is a validated change, not yet written.
type plan struct {
	name, base string
	c          Change
	files      map[string]string
	yml        []byte
	tool       *toolspec.Tool
	lang       string // build with this toolchain, or ""
}

// plan validates a change without writing anything: file names, sizes and
// the tool.yaml.
func (s *Store) plan(name, base string, c Change) (*plan, error) {
	files, err := checkFiles(c)
	if err != nil {
		return nil, err
	}
	var yml []byte
	switch {
	case c.Tool != nil:
		if yml, err = toolYAML(name, c.Tool); err != nil {
			return nil, err
		}
	case c.Files[toolspec.FileName] != "":
		yml = []byte(c.Files[toolspec.FileName])
	case base != "":
		if yml, err = os.ReadFile(filepath.Join(base, toolspec.FileName)); err != nil {
			return nil, fmt.Errorf("read the current tool.yaml of %s: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("%w: give the tool's definition (tool.yaml keys: description, runtime, entry, input_schema, ...)", ErrBadInput)
	}
	tool, err := toolspec.Parse(strings.NewReader(string(yml)), filepath.Join(name, toolspec.FileName))
	if err != nil {
		return nil, err
	}
	if tool.Name != name {
		return nil, fmt.Errorf("%w: tool.yaml names the tool %q, but it is registered as %q; use the same name", ErrBadInput, tool.Name, name)
	}
	lang := c.Build
	switch lang {
	case "", "go", "rust":
	default:
		return nil, fmt.Errorf("%w: build %q: use go or rust", ErrBadInput, lang)
	}
	if lang != "" && tool.Runtime != toolspec.RuntimeWasm {
		return nil, fmt.Errorf("%w: build is for runtime wasm; this tool's runtime is %s", ErrBadInput, tool.Runtime)
	}
	if lang == "" && tool.Runtime == toolspec.RuntimeWasm && base != "" && touchesSource(c) {
		lang = "go"
		if _, err := os.Stat(filepath.Join(base, "Cargo.toml")); err == nil {
			lang = "rust"
		}
		if _, ok := files["Cargo.toml"]; ok {
			lang = "rust"
		}
	}
	return &plan{name: name, base: base, c: c, files: files, yml: yml, tool: tool, lang: lang}, nil
}

// prepare writes a planned change into a temporary folder of Dir (so the
// final rename stays on one file system), builds it if needed and checks
// the result as the executors will (toolspec.Load).
func (s *Store) prepare(ctx context.Context, p *plan) (string, error) {
	tmp, err := s.tempDir(p.name)
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if p.base != "" {
		if err := copyTree(p.base, tmp); err != nil {
			return "", fmt.Errorf("copy the current version of %s: %w", p.name, err)
		}
	}
	for _, r := range p.c.Remove {
		rel, err := checkRel(r)
		if err != nil {
			return "", err
		}
		f := filepath.Join(tmp, rel)
		if _, err := os.Lstat(f); err != nil {
			return "", fmt.Errorf("%w: remove %q: the tool has no such file", ErrBadInput, r)
		}
		if err := os.RemoveAll(f); err != nil {
			return "", err
		}
	}
	for _, rel := range slices.Sorted(mapsKeys(p.files)) {
		if err := writeFile(tmp, rel, p.files[rel]); err != nil {
			return "", err
		}
	}
	if err := writeFile(tmp, toolspec.FileName, string(p.yml)); err != nil {
		return "", err
	}
	dest := filepath.Join(s.Dir, p.name)
	if p.lang != "" {
		if err := s.build(ctx, p.lang, tmp, p.tool); err != nil {
			return "", relabel(err, tmp, dest)
		}
	}
	if _, err := toolspec.Load(tmp); err != nil {
		return "", relabel(err, tmp, dest)
	}
	ok = true
	return tmp, nil
}

func (s *Store) build(ctx context.Context, lang, dir string, tool *toolspec.Tool) error {
	style := toolspec.StyleCommand
	if tool.Wasm != nil && tool.Wasm.Style != "" {
		style = tool.Wasm.Style
	}
	out := filepath.Join(dir, filepath.FromSlash(tool.Entry))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b := s.Build
	if b == nil {
		b = DefaultBuild
	}
	if err := b(ctx, lang, dir, out, style); err != nil {
		return fmt.Errorf("build %s from %s source: %w", tool.Entry, lang, err)
	}
	return nil
}

// DefaultBuild builds with the local toolchains (wasm.BuildGo, wasm.BuildRust).
func DefaultBuild(ctx context.Context, lang, srcDir, outPath, style string) error {
	if lang == "rust" {
		return wasm.BuildRust(ctx, srcDir, outPath, style)
	}
	return wasm.BuildGo(ctx, srcDir, outPath, style)
}

// install makes tmp the live folder of name, keeping the current one as a
// version, and returns the new live version.
func (s *Store) install(name, tmp string) (Version, error) {
	n, err := s.newest(name)
	if err != nil {
		os.RemoveAll(tmp)
		return Version{}, err
	}
	live := s.live(name)
	if _, err := os.Lstat(live); err == nil {
		if err := os.MkdirAll(s.history(name), 0o755); err != nil {
			os.RemoveAll(tmp)
			return Version{}, err
		}
		n++
		if err := exchange(tmp, live); err != nil {
			os.RemoveAll(tmp)
			return Version{}, fmt.Errorf("replace %s: %w", live, err)
		}
		// tmp now holds the version that was live.
		if err := os.Rename(tmp, filepath.Join(s.history(name), strconv.Itoa(n))); err != nil {
			return Version{}, fmt.Errorf("keep the previous version of %s: %w", name, err)
		}
	} else if err := os.Rename(tmp, live); err != nil {
		os.RemoveAll(tmp)
		return Version{}, fmt.Errorf("install %s: %w", live, err)
	}
	s.prune(name)
	return describe(n+1, true, live), nil
}

func (s *Store) tempDir(name string) (string, error) {
	return os.MkdirTemp(s.Dir, ".tmp-"+name+"-")
}

// archived lists the kept version numbers, ascending.
func (s *Store) archived(name string) ([]int, error) {
	entries, err := os.ReadDir(s.history(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 && e.IsDir() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// newest returns the highest kept version number, 0 when none.
func (s *Store) newest(name string) (int, error) {
	nums, err := s.archived(name)
	if err != nil || len(nums) == 0 {
		return 0, err
	}
	return nums[len(nums)-1], nil
}

// prune removes the oldest versions beyond Keep. A failure leaves them.
func (s *Store) prune(name string) {
	keep := s.Keep
	if keep <= 0 {
		keep = DefaultKeep
	}
	nums, err := s.archived(name)
	if err != nil {
		return
	}
	for len(nums) > keep {
		_ = os.RemoveAll(filepath.Join(s.history(name), strconv.Itoa(nums[0])))
		nums = nums[1:]
	}
}

func describe(n int, live bool, dir string) Version {
	v := Version{N: n, Live: live, Dir: dir}
	if fi, err := os.Stat(dir); err == nil {
		v.Time = fi.ModTime()
	}
	if f, err := os.Open(filepath.Join(dir, toolspec.FileName)); err == nil {
		if fi, err := f.Stat(); err == nil {
			v.Time = fi.ModTime()
		}
		if t, err := toolspec.Parse(f, toolspec.FileName); err == nil {
			v.Description, v.ToolVersion, v.Runtime = t.Description, t.Version, t.Runtime
		}
		f.Close()
	}
	return v
}

func touchesSource(c Change) bool {
	for _, p := range append(slices.Collect(mapsKeys(c.Files)), c.Remove...) {
		switch b := filepath.Base(p); {
		case strings.HasSuffix(b, ".go"), strings.HasSuffix(b, ".rs"), b == "go.mod", b == "go.sum", b == "Cargo.toml", b == "Cargo.lock":
			return true
		}
	}
	return false
}

// relabel rewrites the temporary folder's path in err's text to where the
// tool lives.
func relabel(err error, tmp, dir string) error {
	var te *toolspec.Error
	if errors.As(err, &te) {
		out := &toolspec.Error{Problems: slices.Clone(te.Problems)}
		for i := range out.Problems {
			out.Problems[i].File = strings.ReplaceAll(out.Problems[i].File, tmp, dir)
			out.Problems[i].Msg = strings.ReplaceAll(out.Problems[i].Msg, tmp, dir)
		}
		return out
	}
	if msg := err.Error(); strings.Contains(msg, tmp) {
		return &relabeled{msg: strings.ReplaceAll(msg, tmp, dir), err: err}
	}
	return err
}

type relabeled struct {
	msg string
	err error
}

func (r *relabeled) Error() string { return r.msg }
func (r *relabeled) Unwrap() error { return r.err }
