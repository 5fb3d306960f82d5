package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// touch creates empty files (and their directories) under root.
func touch(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil { // no executable bit: Windows has none
			t.Fatal(err)
		}
	}
}

// The Windows lookup, run here on files named as npm and uv install them:
// directories in PATH order, in each the name as given if it ends in a
// PATHEXT extension, then with each PATHEXT extension in order.
func TestLookPathExt(t *testing.T) {
	root := t.TempDir()
	npm := filepath.Join(root, "npm")         // npm's shims: a sh script, a .cmd, a .ps1
	node := filepath.Join(root, "nodejs")     // node.exe, and an npx.exe shadowed by npm's npx.cmd
	uv := filepath.Join(root, "uv")           // uvx.exe
	scripts := filepath.Join(root, "scripts") // a .js found through PATHEXT
	touch(t, root,
		"npm/npx", "npm/npx.cmd", "npm/npx.ps1",
		"nodejs/node.exe", "nodejs/npx.exe", "nodejs/tool.com", "nodejs/tool.exe",
		"uv/uvx.exe", "uv/uvx.exe.cmd",
		"scripts/serve.js",
		"work/bin/server.exe", "work/bin/run.bat",
		"rel/hidden.exe")
	if err := os.Mkdir(filepath.Join(root, "uv", "dir.exe"), 0o755); err != nil {
		t.Fatal(err)
	}
	const std = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"
	path := []string{"", "rel", npm, node, uv, scripts}
	for _, tc := range []struct {
		command, cwd, pathext string
		want                  string // "" for an error
	}{
		{"npx", "", std, filepath.Join(npm, "npx.cmd")},            // an earlier dir wins over a better extension
		{"npx", "", ".EXE", filepath.Join(node, "npx.exe")},        // only what PATHEXT names
		{"npx.exe", "", std, filepath.Join(node, "npx.exe")},       // a name with its extension
		{"NPX.CMD", "", std, ""},                                   // (case-sensitive file system here)
		{"node", "", std, filepath.Join(node, "node.exe")},         //
		{"tool", "", std, filepath.Join(node, "tool.com")},         // PATHEXT order within a dir
		{"tool", "", ".exe;.com", filepath.Join(node, "tool.exe")}, //
		{"uvx", "", std, filepath.Join(uv, "uvx.exe")},             //
		{"uvx.exe", "", std, filepath.Join(uv, "uvx.exe")},         // as given before adding an extension
		{"uvx", "", "", filepath.Join(uv, "uvx.exe")},              // PATHEXT unset: Windows' default
		{"uvx", "", " exe ;; ", filepath.Join(uv, "uvx.exe")},      // sloppy PATHEXT
		{"serve", "", std, filepath.Join(scripts, "serve.js")},     // found; windowsRunnable refuses it
		{"serve.js", "", ".EXE;.CMD", ""},                          // .js not in PATHEXT
		{"hidden", "", std, ""},                                    // relative PATH entries are skipped
		{"dir", "", std, ""},                                       // a directory is no program
		{"bin/server", filepath.Join(root, "work"), std, filepath.Join(root, "work", "bin", "server.exe")},
		{"bin/run", filepath.Join(root, "work"), std, filepath.Join(root, "work", "bin", "run.bat")},
		{filepath.Join(root, "work", "bin", "run.bat"), "", std, filepath.Join(root, "work", "bin", "run.bat")},
		{"bin/missing", filepath.Join(root, "work"), std, ""},
	} {
		got, err := lookPathExt(tc.command, tc.cwd, path, tc.pathext)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("lookPathExt(%q, cwd %q, PATHEXT %q) = %q, %v; want %q", tc.command, tc.cwd, tc.pathext, got, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), tc.command) {
			t.Errorf("error %q does not name the command %q", err, tc.command)
		}
	}
}

func TestPathExts(t *testing.T) {
	for in, want := range map[string][]string{
		".COM;.EXE;.BAT;.CMD": {".com", ".exe", ".bat", ".cmd"},
		"":                    {".com", ".exe", ".bat", ".cmd"},
		";;":                  {".com", ".exe", ".bat", ".cmd"},
		"exe; .Cmd ;.EXE":     {".exe", ".cmd"},
	} {
		if got := pathExts(in); !slices.Equal(got, want) {
			t.Errorf("pathExts(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWindowsRunnable(t *testing.T) {
	for path, want := range map[string]bool{
		`C:\nodejs\node.exe`: true, `C:\x\TOOL.COM`: true, `C:\npm\npx.cmd`: true, `C:\x\run.BAT`: true,
		`C:\x\serve.js`: false, `C:\x\run.ps1`: false, `C:\x\run.bat.`: false, `C:\x\run`: false,
	} {
		err := windowsRunnable(path)
		if (err == nil) != want || err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("windowsRunnable(%q) = %v; want runnable %v, or an error naming the file", path, err, want)
		}
	}
}

// The spec's variables replace inherited ones; the rest of the executor's
// environment stays out.
func TestChildEnv(t *testing.T) {
	t.Setenv("PATH", "/usr/bin")
	t.Setenv("HOME", "/home/me")
	t.Setenv("SKILLGATE_TEST_SECRET", "x")
	env := childEnv(map[string]string{"PATH": "/opt/bin", "API_KEY": "k"})
	for _, kv := range env {
		if strings.HasPrefix(kv, "SKILLGATE_TEST_SECRET=") {
			t.Errorf("childEnv passed on %s", kv)
		}
	}
	if got := envValue(env, "PATH"); got != "/opt/bin" {
		t.Errorf("PATH = %q, want the spec's", got)
	}
	if got := envValue(env, "HOME"); got != "/home/me" {
		t.Errorf("HOME = %q, want the executor's", got)
	}
	if !slices.IsSorted(env) || !slices.Contains(env, "API_KEY=k") {
		t.Errorf("env = %q, want sorted, with API_KEY", env)
	}
}
