package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// These tests come from an audit of skillgate launched by a desktop
// client (Claude Desktop): a reduced environment, the working folder /.

// TestImportLeavesOutSkillgate: an entry of a client's config that runs
// skillgate itself is not imported (the gateway would start itself as one
// of its servers, again and again), with a warning naming it.
func TestImportLeavesOutSkillgate(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := `{"mcpServers": {
  "gw": {"command": "/opt/bin/skillgate", "args": ["run", "--stdio", "-c", "/home/u/skillgate.yaml"]},
  "bare": {"command": "skillgate"},
  "win": {"command": "C:\\tools\\skillgate.exe", "args": ["run", "--stdio"]},
  "gorun": {"command": "go", "args": ["run", "github.com/skillgate/skillgate/cmd/skillgate@latest", "run", "--stdio"]},
  "gorunlocal": {"command": "go", "args": ["run", "./cmd/skillgate", "run", "--stdio"]},
  "npx": {"command": "npx", "args": ["-y", "skillgate@1.2.0", "run", "--stdio"]},
  "self": {"command": ` + jsonString(exe) + `, "args": ["run", "--stdio"]},
  "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
  "gotool": {"command": "go", "args": ["run", "github.com/other/skillgate-tools@latest"]},
  "notes": {"command": "skillgate-notes"}
}}`
	im, err := Import(strings.NewReader(file), "claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"everything", "gotool", "notes"}; strings.Join(im.Order, ",") != strings.Join(want, ",") {
		t.Errorf("imported %v, want %v", im.Order, want)
	}
	for _, name := range []string{"gw", "bare", "win", "gorun", "gorunlocal", "npx", "self"} {
		found := false
		for _, w := range im.Warnings {
			if w.Field == name && strings.Contains(w.Error(), "skillgate itself") && strings.Contains(w.Error(), "not imported") {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning names %s as skillgate itself; warnings: %v", name, im.Warnings)
		}
	}
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// TestStdioIgnoresHTTPSettings: over stdio a ${VAR} not set in a setting
// only the HTTP front end reads becomes a Note, not an error; for HTTP it
// stays an error, which says where variables come from.
func TestStdioIgnoresHTTPSettings(t *testing.T) {
	const file = `listen: {http: "${SG_T_LISTEN}", allowed_hosts: ["${SG_T_HOST}"]}
auth: {tokens: ["${SG_T_TOKEN}"]}
limits: {http_body_cap: "${SG_T_CAP}"}
servers:
  a: {command: node, args: ["${SG_T_ARG}"]}
`
	cfg, err := ParseForStdio(strings.NewReader(file), "f.yaml", nil)
	if err != nil {
		t.Fatalf("ParseForStdio: %v", err)
	}
	if len(cfg.Notes) != 4 || !strings.Contains(cfg.Notes[2].Error(), "f.yaml:2:17: auth.tokens[0]: undefined variable ${SG_T_TOKEN}") ||
		!strings.Contains(cfg.Notes[2].Error(), "ignored over stdio") {
		t.Errorf("notes = %v, want one per HTTP-only setting, auth.tokens[0] the third", cfg.Notes)
	}
	if cfg.Listen.HTTP != Default().Listen.HTTP || len(cfg.Auth.Tokens) != 0 || cfg.Limits.HTTPBodyCap != Default().Limits.HTTPBodyCap {
		t.Errorf("listen %+v, auth %+v, body cap %v: want the defaults", cfg.Listen, cfg.Auth, cfg.Limits.HTTPBodyCap)
	}
	if p := cfg.Servers["a"].Problem; p == nil || !errors.Is(p, ErrUndefinedVariable) {
		t.Errorf("server a's problem = %v, want its unset variable", p)
	}

	_, err = ParseForRun(strings.NewReader(file), "f.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "auth.tokens[0]: undefined variable") ||
		!strings.Contains(err.Error(), "skillgate reads variables from the environment it was started in") {
		t.Errorf("ParseForRun = %v, want the unset token as an error with the hint about where variables come from", err)
	}
	if n := strings.Count(err.Error(), "skillgate reads variables"); n != 1 {
		t.Errorf("the hint is given %d times, want once:\n%v", n, err)
	}
	// A problem other than an unset variable stays an error over stdio.
	if _, err := ParseForStdio(strings.NewReader("auth: {tokens: \"${SG_T_TOKEN}\"}\nlisten: {nope: 1}\n"), "f.yaml", nil); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Errorf("ParseForStdio of an unknown key = %v, want an error", err)
	}
}

// TestLoadRelativeNotFound: a relative config path that is not found
// says in which folder it was looked for, and that a desktop client needs
// an absolute path.
func TestLoadRelativeNotFound(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := LoadForRun("skillgate.yaml")
	if err == nil || !strings.Contains(err.Error(), "working folder, here "+dir) || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("LoadForRun = %v, want it to name the working folder %s and ask for an absolute path", err, dir)
	}
	if _, err := LoadForRun(filepath.Join(dir, "skillgate.yaml")); err == nil || strings.Contains(err.Error(), "working folder") {
		t.Errorf("an absolute path not found: %v, want no working folder hint", err)
	}
}

// TestLoadExpandsHome: `-c ~/skillgate.yaml` from a client's config (no
// shell expands it) is the file in the home folder.
func TestLoadExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(t.TempDir())
	if err := os.WriteFile(filepath.Join(home, "skillgate.yaml"), []byte("tools: {dirs: [tools]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, load := range []func(string) (*Config, error){Load, LoadForRun, LoadForStdio} {
		cfg, err := load("~/skillgate.yaml")
		if err != nil {
			t.Fatalf("load ~/skillgate.yaml: %v", err)
		}
		if want := filepath.Join(home, "tools"); cfg.Tools.Dirs[0] != want {
			t.Errorf("tools dir %s, want %s (relative to the file)", cfg.Tools.Dirs[0], want)
		}
	}
	if _, err := Load("~nobody-here/skillgate.yaml"); err == nil {
		t.Error("~user/ was expanded")
	}
}

// TestBuiltinDefaultNotes: the built-in default started outside the
// repository root (a desktop client starts it in /) says which bundled
// folders it did not find and what to do; at the root it says nothing.
func TestBuiltinDefaultNotes(t *testing.T) {
	root := testenv.RepoRoot(t)
	t.Chdir(t.TempDir())
	cfg := BuiltinDefault()
	if len(cfg.Notes) != 1 || !strings.Contains(cfg.Notes[0].Error(), "examples/tools, examples/pipelines, examples/skills") ||
		!strings.Contains(cfg.Notes[0].Error(), "repository root") || !strings.Contains(cfg.Notes[0].Error(), "-c") {
		t.Errorf("notes = %v, want one naming the missing folders", cfg.Notes)
	}
	t.Chdir(root)
	if cfg := BuiltinDefault(); len(cfg.Notes) != 0 || len(cfg.Tools.Dirs) != 1 {
		t.Errorf("at the repository root: notes %v, tools dirs %v; want no note and examples/tools", cfg.Notes, cfg.Tools.Dirs)
	}
}
