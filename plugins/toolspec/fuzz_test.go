package toolspec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that a parsed tool's JSON form
// round-trips and validates, and that its definition is JSON.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("name: a\ndescription: d\nruntime: wasm\nentry: a.wasm\nwasm: {style: reactor, function: run}\n"))
	seeds, _ := filepath.Glob("testdata/errors/*.yaml")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tool, err := Parse(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if !json.Valid(tool.Definition()) {
			t.Fatalf("definition is not JSON: %s", tool.Definition())
		}
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var back Tool
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("round trip of %s: %v", raw, err)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("round-tripped tool is invalid: %v\n%s", err, raw)
		}
	})
}

// FuzzResolve checks the path jail: whatever rel is, a resolved path is
// inside the folder.
func FuzzResolve(f *testing.F) {
	dir := f.TempDir()
	for _, p := range []string{"a/b.py", "c.py"} {
		full := filepath.Join(dir, p)
		_ = os.MkdirAll(filepath.Dir(full), 0o755)
		_ = os.WriteFile(full, nil, 0o644)
	}
	_ = os.Symlink("/etc", filepath.Join(dir, "etc"))
	_ = os.Symlink("../c.py", filepath.Join(dir, "a", "up.py"))
	for _, s := range []string{"a/b.py", "../x", "etc/passwd", "a/up.py", "/etc/passwd", "a/../c.py", "./c.py", "a//b.py", "\x00"} {
		f.Add(s)
	}
	root, _ := filepath.EvalSymlinks(dir)
	f.Fuzz(func(t *testing.T, rel string) {
		p, err := Resolve(dir, rel)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %q, outside %s", rel, p, root)
		}
	})
}
