package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestImportProjectFile: a server of Claude Code's .mcp.json whose script
// is a path relative to the project folder, where Claude Code runs it,
// imports with cwd: that folder and serves its tools from a gateway run
// anywhere else. Merged into a config that has it already, as it is, it
// is left as it is while a new server is merged.
func TestImportProjectFile(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	project := t.TempDir()
	if err := os.Symlink(filepath.Dir(argv[1]), filepath.Join(project, "srv")); err != nil {
		t.Fatal(err)
	}
	entry, err := json.Marshal(map[string]any{"command": argv[0], "args": append([]string{"srv/" + filepath.Base(argv[1])}, argv[2:]...)})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(project, ".mcp.json")
	writeFile(t, src, `{"mcpServers": {"ev": `+string(entry)+`}}`)
	bin := buildSkillgate(t)
	elsewhere := t.TempDir()
	run := func(args ...string) (string, string, error) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = elsewhere
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	out, stderr, err := run("import", src)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	if want := "note: " + src + " is a project's file: its stdio servers run in the project folder, so ev got cwd: " + project; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, out)
	list, stderr, err := run("tools", "list", "--json", "-c", cfg)
	if err != nil || !strings.Contains(list, `"name": "ev__echo"`) {
		t.Fatalf("tools list: %v; no ev__echo in:\n%s\n%s", err, list, stderr)
	}

	// Merged again with a new server: ev is left as it is, new is merged.
	writeFile(t, src, `{"mcpServers": {"ev": `+string(entry)+`, "new": {"command": "node", "args": ["n.js"]}}}`)
	if _, stderr, err = run("import", src, "--merge", cfg, "--write"); err != nil {
		t.Fatalf("import --merge: %v\n%s", err, stderr)
	}
	for _, want := range []string{"note: " + cfg + " already has ev as imported; left as it is", "imported 1 servers into " + cfg} {
		if !strings.Contains(stderr, want) {
			t.Errorf("import --merge: stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Another definition of new fails, merging nothing, unless told what to do.
	writeFile(t, src, `{"mcpServers": {"ev": `+string(entry)+`, "new": {"command": "node", "args": ["m.js"]}, "other": {"command": "x"}}}`)
	before, _ := os.ReadFile(cfg)
	_, stderr, err = run("import", src, "--merge", cfg, "--write")
	if after, _ := os.ReadFile(cfg); err == nil || !strings.Contains(stderr, "servers.new: already defined, otherwise than the imported server") || !bytes.Equal(before, after) {
		t.Errorf("a conflict: err %v, file changed %v, stderr:\n%s", err, !bytes.Equal(before, after), stderr)
	}
	if _, stderr, err = run("import", src, "--merge", cfg, "--write", "--skip-existing"); err != nil ||
		!strings.Contains(stderr, "has another new; kept it (--skip-existing)") || !strings.Contains(stderr, "imported 1 servers") {
		t.Errorf("--skip-existing: %v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), "args: [n.js]") || !strings.Contains(string(b), "other:") {
		t.Errorf("--skip-existing did not keep new, or did not merge other:\n%s", b)
	}
}
