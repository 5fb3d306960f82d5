package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// tools list tells of each server that is not ready once, after the list:
// the gateway's log line about the same failure is left out.
func TestToolsListReportsFailureOnce(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "tools", "broken_tool")
	if err := os.MkdirAll(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tool, "tool.yaml"), "name: broken_tool\ndescription: d\nruntime: bash\nentry: main.sh\nargs: [a\n")
	writeFile(t, filepath.Join(tool, "main.sh"), "echo hi\n")
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, `servers:
  broken:
    command: sh
    args: ["-c", "echo cannot open the database >&2; exit 3"]
tools: {dirs: [./tools]}
`)
	bin := buildSkillgate(t)
	stderr := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-c", cfg}, args...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return errb.String()
	}
	for _, args := range [][]string{{"tools", "list"}, {"tools", "list", "--json"}} {
		got := stderr(args...)
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 2 ||
			!strings.HasPrefix(lines[0], `server broken failed: `) || !strings.Contains(lines[0], "cannot open the database") ||
			!strings.HasPrefix(lines[1], "server tool:broken_tool is invalid: ") || !strings.Contains(lines[1], "tool.yaml:5:7: invalid YAML") {
			t.Errorf("%v: stderr is not one line per server:\n%s", args, got)
		}
	}
	// Asked for, the log has the failures too.
	if got := stderr("tools", "list", "--log-level", "warn"); !strings.Contains(got, `msg="source failed to load" source=broken`) {
		t.Errorf("--log-level warn: no log line for the failure:\n%s", got)
	}
}

// An error a TypeScript SDK server returns shows its code once: the SDK
// writes it into the message as well ("MCP error -32602: ...").
func TestCallShowsErrorCodeOnce(t *testing.T) {
	modules := testenv.NPMDir(t)
	testenv.Require(t, "npm package @modelcontextprotocol/sdk", isDir(filepath.Join(modules, "@modelcontextprotocol", "sdk")),
		"run scripts/test-deps.sh")
	script, err := filepath.Abs(filepath.Join("testdata", "invalid_params.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, `servers:
  strict:
    command: `+testenv.Node22(t)+`
    args: [`+script+`]
    env: {NODE_PATH: `+modules+`}
`)
	cmd := exec.Command(buildSkillgate(t), "call", "strict__add", "--arg", "a=x", "-c", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	if got, want := stderr.String(), "skillgate: rpc error -32602: a must be a number\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
