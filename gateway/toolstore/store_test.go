package toolstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/toolstore"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

func py(msg string) toolstore.Change {
	return toolstore.Change{
		Tool:  json.RawMessage(`{"description":"Say ` + msg + `.","runtime":"python","entry":"main.py","timeout":"5s","ulimits":{"memory":67108864}}`),
		Files: map[string]string{"main.py": "print('" + msg + "')\n", "lib/util.py": "X = 1\n"},
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listing returns every path under dir, so a test can check that nothing
// was written (the lock file and its folder aside).
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !strings.HasSuffix(p, ".lock") && p != filepath.Join(dir, ".versions") {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return out
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := toolstore.New(dir)
	v, err := st.Register(ctx, "hello", py("hello"))
	if err != nil || v.N != 1 || !v.Live {
		t.Fatalf("register: %+v %v", v, err)
	}
	tool, err := toolspec.Load(filepath.Join(dir, "hello"))
	if err != nil {
		t.Fatalf("written folder does not load: %v\n%s", err, read(t, filepath.Join(dir, "hello", "tool.yaml")))
	}
	if tool.Name != "hello" || tool.Ulimits.Memory != 64<<20 || tool.Timeout.Std().String() != "5s" {
		t.Errorf("tool.yaml round trip: %+v", tool)
	}
	if _, err := st.Register(ctx, "hello", py("again")); !errors.Is(err, toolstore.ErrExists) {
		t.Errorf("second register: %v", err)
	}
	if v, err = st.Update(ctx, "hello", toolstore.Change{Files: map[string]string{"main.py": "print('hi')\n"}, Remove: []string{"lib/util.py"}}); err != nil || v.N != 2 {
		t.Fatalf("update: %+v %v", v, err)
	}
	if got := read(t, filepath.Join(dir, "hello", "main.py")); got != "print('hi')\n" {
		t.Errorf("main.py after update: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello", "lib", "util.py")); err == nil {
		t.Error("removed file still there")
	}
	if _, err := os.Stat(filepath.Join(dir, "hello", "tool.yaml")); err != nil {
		t.Error("update without tool lost tool.yaml")
	}
	vs, err := st.Versions("hello")
	if err != nil || len(vs) != 2 || vs[0].N != 1 || vs[0].Live || vs[1].N != 2 || !vs[1].Live || vs[0].Description != "Say hello." {
		t.Fatalf("versions: %+v %v", vs, err)
	}
	if v, err = st.Rollback(ctx, "hello", 0); err != nil || v.N != 3 {
		t.Fatalf("rollback: %+v %v", v, err)
	}
	if got := read(t, filepath.Join(dir, "hello", "main.py")); got != "print('hello')\n" {
		t.Errorf("main.py after rollback: %q", got)
	}
	if v, err = st.Delete("hello"); err != nil || v.N != 3 {
		t.Fatalf("delete: %+v %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello")); err == nil {
		t.Fatal("deleted tool still has its folder")
	}
	if v, err = st.Rollback(ctx, "hello", 2); err != nil || v.N != 4 {
		t.Fatalf("rollback of a deleted tool: %+v %v", v, err)
	}
	if got := read(t, filepath.Join(dir, "hello", "main.py")); got != "print('hi')\n" {
		t.Errorf("main.py after restoring version 2: %q", got)
	}
	if _, err := st.Rollback(ctx, "hello", 42); !errors.Is(err, toolstore.ErrNotFound) {
		t.Errorf("rollback to a missing version: %v", err)
	}
	for _, e := range listing(t, dir) {
		if strings.Contains(e, ".tmp-") {
			t.Errorf("temporary folder left: %s", e)
		}
	}
}

func TestKeep(t *testing.T) {
	ctx := context.Background()
	st := &toolstore.Store{Dir: t.TempDir(), Keep: 2}
	if _, err := st.Register(ctx, "t", py("0")); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := st.Update(ctx, "t", py(string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	vs, _ := st.Versions("t")
	var nums []int
	for _, v := range vs {
		nums = append(nums, v.N)
	}
	if !slices.Equal(nums, []int{3, 4, 5}) {
		t.Errorf("versions kept: %v, want [3 4 5]", nums)
	}
}

func TestRejected(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := toolstore.New(dir)
	ok := py("ok")
	with := func(files map[string]string) toolstore.Change {
		c := toolstore.Change{Tool: ok.Tool, Files: map[string]string{"main.py": "print(1)"}}
		for k, v := range files {
			c.Files[k] = v
		}
		return c
	}
	cases := []struct {
		name, tool string
		c          toolstore.Change
		want       string
	}{
		{"abs", "t", with(map[string]string{"/etc/x": "x"}), "absolute"},
		{"dotdot", "t", with(map[string]string{"../x": "x"}), "leaves the tool folder"},
		{"dotdot-inner", "t", with(map[string]string{"a/../../x": "x"}), "leaves the tool folder"},
		{"nul", "t", with(map[string]string{"a\x00b": "x"}), "NUL"},
		{"bad-name", "../t", ok, "must match"},
		{"name-mismatch", "t", toolstore.Change{Tool: json.RawMessage(`{"name":"other","description":"d","runtime":"python","entry":"main.py"}`), Files: ok.Files}, `"other"`},
		{"bad-runtime", "t", toolstore.Change{Tool: json.RawMessage(`{"description":"d","runtime":"cobol","entry":"main.py"}`), Files: ok.Files}, "runtime"},
		{"unknown-key", "t", toolstore.Change{Tool: json.RawMessage(`{"description":"d","runtime":"python","entry":"main.py","colour":"red"}`), Files: ok.Files}, "colour"},
		{"no-entry", "t", toolstore.Change{Tool: ok.Tool, Files: map[string]string{"other.py": "x"}}, "main.py"},
		{"not-object", "t", toolstore.Change{Tool: json.RawMessage(`[1]`)}, "JSON object"},
		{"no-tool", "t", toolstore.Change{Files: map[string]string{"main.py": "x"}}, "definition"},
		{"build-script", "t", toolstore.Change{Tool: ok.Tool, Files: ok.Files, Build: "go"}, "runtime wasm"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := listing(t, dir)
			_, err := st.Register(ctx, tc.tool, tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if after := listing(t, dir); !slices.Equal(before, after) {
				t.Errorf("something was written: %v -> %v", before, after)
			}
		})
	}
	// A live folder holding a symlink is not copied into a new version.
	if _, err := st.Register(ctx, "t", ok); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "t", "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, "t", toolstore.Change{Files: map[string]string{"main.py": "print(2)"}}); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("update of a folder with a symlink: %v", err)
	}
	if got := read(t, filepath.Join(dir, "t", "main.py")); got != "print('ok')\n" {
		t.Errorf("failed update changed the live folder: %q", got)
	}
}

func TestBuildWasm(t *testing.T) {
	ctx := context.Background()
	var built []string
	st := &toolstore.Store{Dir: t.TempDir(), Build: func(_ context.Context, lang, src, out, style string) error {
		built = append(built, lang+" "+style+" "+filepath.Base(out))
		return os.WriteFile(out, []byte("\x00asm\x01\x00\x00\x00"), 0o644)
	}}
	c := toolstore.Change{
		Tool:  json.RawMessage(`{"description":"d","runtime":"wasm","entry":"mod.wasm","wasm":{"style":"reactor","function":"run"}}`),
		Files: map[string]string{"main.go": "package main\n"},
		Build: "go",
	}
	if _, err := st.Register(ctx, "w", c); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, "w", toolstore.Change{Files: map[string]string{"main.go": "package main // v2\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, "w", toolstore.Change{Files: map[string]string{"README": "no rebuild"}}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"go reactor mod.wasm", "go reactor mod.wasm"}; !slices.Equal(built, want) {
		t.Errorf("builds = %v, want %v", built, want)
	}
	failing := &toolstore.Store{Dir: st.Dir, Build: func(context.Context, string, string, string, string) error {
		return errors.New("compiler says no")
	}}
	before := listing(t, st.Dir)
	if _, err := failing.Update(ctx, "w", toolstore.Change{Files: map[string]string{"main.go": "broken"}}); err == nil || !strings.Contains(err.Error(), "compiler says no") {
		t.Errorf("failed build: %v", err)
	}
	if after := listing(t, st.Dir); !slices.Equal(before, after) {
		t.Errorf("a failed build wrote: %v -> %v", before, after)
	}
}
