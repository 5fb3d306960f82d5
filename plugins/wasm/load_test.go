package wasm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// Hand-assembled modules, small enough to compile in a blink even under
// -race. emptyCommand is (module (func (export "_start"))).
var (
	emptyCommand = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: func () -> ()
		0x03, 0x02, 0x01, 0x00, // func 0: type 0
		0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00, // export "_start" func 0
		0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // code: no locals, end
	}
	// importsEnv is emptyCommand importing env.foo, which the executor
	// does not provide.
	importsEnv = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
		0x02, 0x0b, 0x01, 0x03, 'e', 'n', 'v', 0x03, 'f', 'o', 'o', 0x00, 0x00, // import env.foo: func type 0
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x01, // export "_start" func 1
		0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b,
	}
	// trapCommand is (module (func (export "_start") unreachable)).
	trapCommand = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00,
		0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b, // code: unreachable, end
	}
	// growBomb grows its memory a page at a time until memory.grow fails,
	// then traps: (module (memory 1) (func (export "_start")
	// (loop (br_if 0 (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
	// unreachable)).
	growBomb = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
		0x03, 0x02, 0x01, 0x00,
		0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page, no max
		0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00,
		0x0a, 0x11, 0x01, 0x0f, 0x00,
		0x03, 0x40, // loop
		0x41, 0x01, 0x40, 0x00, // memory.grow (i32.const 1)
		0x41, 0x7f, 0x47, 0x0d, 0x00, // br_if 0 (i32.ne ... -1)
		0x0b,       // end loop
		0x00, 0x0b, // unreachable, end
	}
	// paramReactor is (module (func (export "run") (param i32))), not
	// the reactor ABI.
	paramReactor = []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00, // type: func (i32) -> ()
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x07, 0x01, 0x03, 'r', 'u', 'n', 0x00, 0x00, // export "run" func 0
		0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b,
	}
)

// moduleFolder makes a tool folder whose module.wasm is bin.
func moduleFolder(t testing.TB, bin []byte, tool map[string]any) []byte {
	t.Helper()
	style := StyleCommand
	if w, ok := tool["wasm"].(map[string]any); ok && w["style"] == StyleReactor {
		style = StyleReactor
	}
	spec := toolFolder(t, style, tool)
	if err := os.WriteFile(filepath.Join(toolDir(t, spec), "module.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestLoadErrors(t *testing.T) {
	c, _ := startExec(t)
	outside := filepath.Join(t.TempDir(), "outside.wasm")
	copyFile(t, guest(t, StyleCommand), outside)

	for _, tc := range []struct {
		name string
		kind string
		spec func(t *testing.T) []byte
		want []string
		is   error
	}{
		{"another kind", "script", func(t *testing.T) []byte { return toolFolder(t, StyleCommand, nil) },
			[]string{`kind "script"`}, sdk.ErrUnsupported},
		{"not JSON", "", func(*testing.T) []byte { return []byte(`{"dir":`) },
			[]string{"not valid JSON"}, sdk.ErrInvalidSpec},
		{"not a wasm runtime", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"runtime": "python", "wasm": map[string]any{}})
		}, []string{"wasm"}, sdk.ErrInvalidSpec},
		{"missing entry", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"entry": "missing.wasm"})
		}, []string{"missing.wasm", "does not exist"}, sdk.ErrInvalidSpec},
		{"entry leaves the folder", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"entry": "../outside.wasm"})
		}, []string{"leaves the tool folder"}, sdk.ErrInvalidSpec},
		{"entry symlinked out of the folder", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"entry": "link.wasm"}, func(dir string) {
				if err := os.Symlink(outside, filepath.Join(dir, "link.wasm")); err != nil {
					t.Fatal(err)
				}
			})
		}, []string{"outside the tool folder"}, sdk.ErrInvalidSpec},
		{"not a module", "", func(t *testing.T) []byte { return moduleFolder(t, []byte("#!/bin/sh\necho hi\n"), nil) },
			[]string{"compile module.wasm"}, sdk.ErrInvalidSpec},
		{"foreign import", "", func(t *testing.T) []byte { return moduleFolder(t, importsEnv, nil) },
			[]string{"imports env.foo", "wasip1"}, sdk.ErrInvalidSpec},
		{"reactor run as a command", "", func(t *testing.T) []byte {
			spec := toolFolder(t, StyleCommand, nil)
			copyFile(t, guest(t, StyleReactor), filepath.Join(toolDir(t, spec), "module.wasm"))
			return spec
		}, []string{"no _start", "style: reactor"}, sdk.ErrInvalidSpec},
		{"command run as a reactor", "", func(t *testing.T) []byte {
			spec := toolFolder(t, StyleReactor, nil)
			copyFile(t, guest(t, StyleCommand), filepath.Join(toolDir(t, spec), "module.wasm"))
			return spec
		}, []string{`no function "run"`, "_start"}, sdk.ErrInvalidSpec},
		{"wrong function", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleReactor, map[string]any{"wasm": map[string]any{"function": "handle"}})
		}, []string{`no function "handle"`, "run"}, sdk.ErrInvalidSpec},
		{"function with parameters", "", func(t *testing.T) []byte {
			return moduleFolder(t, paramReactor, map[string]any{"wasm": map[string]any{"style": StyleReactor}})
		}, []string{`"run" must take no parameters`}, sdk.ErrInvalidSpec},
		{"memory limit below the module's own", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"wasm": map[string]any{"memory_limit": "128KiB"}})
		}, []string{"memory", "over limit of 2 pages"}, sdk.ErrInvalidSpec},
		{"mount of a file", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"wasm": map[string]any{"mounts": []map[string]string{{"path": "module.wasm"}}}})
		}, []string{"only be given directories"}, sdk.ErrInvalidSpec},
		{"mount symlinked out of the folder", "", func(t *testing.T) []byte {
			return toolFolder(t, StyleCommand, map[string]any{"wasm": map[string]any{"mounts": []map[string]string{{"path": "etc"}}}}, func(dir string) {
				if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
					t.Fatal(err)
				}
			})
		}, []string{"outside the tool folder"}, sdk.ErrInvalidSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind := tc.kind
			if kind == "" {
				kind = Kind
			}
			_, err := c.Load(t.Context(), sdk.LoadRequest{Source: "bad", Kind: kind, Spec: tc.spec(t)})
			if !errors.Is(err, tc.is) {
				t.Fatalf("Load: %v, want %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
	if _, err := c.Call(t.Context(), toolCall("bad", "guest", `{}`), &sdktest.Recorder{}); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Errorf("a failed Load left a source behind: %v", err)
	}
}

type fileState struct {
	size int64
	mod  time.Time
}

// cacheFiles lists the compiled modules in a cache folder.
func cacheFiles(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	files := map[string]fileState{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == dir {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files[path] = fileState{fi.Size(), fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.mod.Equal(w.mod) || v.size != w.size {
			return false
		}
	}
	return true
}

func TestCompilationCache(t *testing.T) {
	t.Run("populated, then reused by another executor", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "cache")
		spec := moduleFolder(t, emptyCommand, nil)
		for i := range 2 {
			e := New(WithLogger(quietLogger()), WithCacheDir(dir))
			c := sdktest.Start(t, e, nil)
			before := cacheFiles(t, dir)
			load(t, c, "empty", spec)
			if r, _ := call(t, c, "empty", `{}`); r.IsError {
				t.Fatalf("executor %d: %+v", i, r)
			}
			after := cacheFiles(t, dir)
			switch {
			case i == 0 && (len(before) != 0 || len(after) != 1):
				t.Fatalf("first executor: cache held %d files before and %d after, want 0 and 1", len(before), len(after))
			case i == 1 && !sameFiles(before, after):
				t.Fatalf("second executor wrote to the cache (compiled again): %v, then %v", before, after)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("Go guests load from the cache", func(t *testing.T) {
		// TestMain precompiled the guests into cacheDir.
		before := cacheFiles(t, cacheDir)
		if len(before) < len(guestSources) {
			t.Fatalf("shared cache holds %d modules, want at least %d", len(before), len(guestSources))
		}
		c, _ := startExec(t)
		load(t, c, "cmd", toolFolder(t, StyleCommand, nil))
		load(t, c, "re", toolFolder(t, StyleReactor, nil))
		if after := cacheFiles(t, cacheDir); !sameFiles(before, after) {
			t.Fatalf("loading precompiled guests wrote to the cache: %v, then %v", before, after)
		}
	})
	t.Run("unusable folder falls back to memory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		writeFile(t, file, "not a folder")
		c, _ := startExec(t, WithCacheDir(filepath.Join(file, "cache")))
		load(t, c, "empty", moduleFolder(t, emptyCommand, nil))
		if r, _ := call(t, c, "empty", `{}`); r.IsError {
			t.Fatalf("result = %+v", r)
		}
	})
}

func TestPrecompile(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(t.TempDir(), "empty.wasm")
	if err := os.WriteFile(mod, emptyCommand, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Precompile(t.Context(), dir, mod); err != nil {
		t.Fatal(err)
	}
	files := cacheFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("cache = %v, want one compiled module", files)
	}
	// An executor on that folder finds it there.
	c, _ := startExec(t, WithCacheDir(dir))
	load(t, c, "empty", moduleFolder(t, emptyCommand, nil))
	if !sameFiles(files, cacheFiles(t, dir)) {
		t.Fatal("Load compiled a precompiled module again")
	}
	if err := Precompile(t.Context(), dir, filepath.Join(dir, "missing.wasm")); err == nil {
		t.Fatal("Precompile of a missing file succeeded")
	}
}

func TestTrap(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "trap", moduleFolder(t, trapCommand, nil))
	r, _ := call(t, c, "trap", `{}`)
	if !r.IsError || r.status() != StatusTrap || !strings.Contains(r.text(), "unreachable") || strings.Contains(r.text(), "wasm stack trace") {
		t.Fatalf("result = %+v", r)
	}
}

func TestMemoryGrowBomb(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "bomb", moduleFolder(t, growBomb, map[string]any{"wasm": map[string]any{"memory_limit": "8MiB"}}))
	r, _ := call(t, c, "bomb", `{}`)
	if !r.IsError || r.status() != StatusMemoryLimit || !strings.Contains(r.text(), "used 8MiB of its 8MiB memory limit") {
		t.Fatalf("result = %+v", r)
	}
}
