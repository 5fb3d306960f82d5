package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runCLI runs the skillgate command in process and returns its stdout,
// stderr and error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// pipelineCLIConfig writes a config whose pipelines folder holds a good
// pipeline over the admin tools (so nothing needs an upstream) and returns
// the config's path and the folder.
func pipelineCLIConfig(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "pipelines")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(pdir, "status.yaml"), `description: Count the gateway's sources and tools list costs
inputs: {type: object, properties: {label: {type: string, default: "sources"}}}
steps:
  - {id: servers, tool: admin__servers}
  - {id: stats, tool: admin__stats}
  - id: report
    tool: admin__servers
    needs: [servers, stats]
    with: {label: "${{ inputs.label }}"}
outputs:
  label: ${{ inputs.label }}
  count: ${{ len(steps.servers.outputs.servers) }}
`)
	cfg := filepath.Join(dir, "skillgate.yaml")
	write(cfg, "pipelines: {dirs: [./pipelines]}\n")
	return cfg, pdir
}

func TestPipelineCLI(t *testing.T) {
	cfg, pdir := pipelineCLIConfig(t)

	// validate: one file with problems, checked against the config's tools.
	bad := filepath.Join(pdir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("steps:\n  - id: a\n    tool: admin__nosuch\n  - id: b\n    tool: admin__servers\n    with: {x: \"${{ steps.c.outputs }}\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, "-c", cfg, "pipeline", "validate", bad)
	var code exitError
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("validate bad: %v\n%s", err, stderr)
	}
	for _, want := range []string{bad + ":3:11: steps[0].tool: unknown tool \"admin__nosuch\"", bad + ":6:", `unknown step "c"`, "2 problems"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate output lacks %q:\n%s", want, stderr)
		}
	}
	out, _, err := runCLI(t, "-c", cfg, "pipeline", "validate", "--no-tools", "--json", bad)
	var v struct {
		Problems []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"problems"`
	}
	if !errors.As(err, &code) || json.Unmarshal([]byte(out), &v) != nil || len(v.Problems) != 1 || v.Problems[0].Line != 6 {
		t.Errorf("validate --no-tools --json: %v\n%s", err, out)
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runCLI(t, "-c", cfg, "pipeline", "validate", "--all"); err != nil || !strings.Contains(stderr, "status.yaml:1:1: ok (pipelines__status, 3 steps)") {
		t.Errorf("validate --all: %v\n%s", err, stderr)
	}

	// graph, text and Mermaid.
	out, _, err = runCLI(t, "-c", cfg, "pipeline", "graph", "status")
	if err != nil || !strings.Contains(out, "stage 1:\n  servers -> admin__servers\n  stats -> admin__stats\nstage 2:\n  report -> admin__servers") {
		t.Errorf("graph: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "-c", cfg, "pipeline", "graph", "status", "--mermaid")
	if err != nil || !strings.HasPrefix(out, "flowchart") {
		t.Errorf("graph --mermaid: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "-c", cfg, "pipeline", "graph", "nosuch"); err == nil || !strings.Contains(err.Error(), `no pipeline "nosuch" in the config (have: status)`) {
		t.Errorf("graph nosuch: %v", err)
	}

	// run --dry-run, then a real run with progress on stderr.
	out, _, err = runCLI(t, "-c", cfg, "pipeline", "run", "status", "--arg", "label=n", "--dry-run")
	if err != nil || !strings.Contains(out, "plan of status") || !strings.Contains(out, `with: {"label":"n"}`) {
		t.Errorf("dry run: %v\n%s", err, out)
	}
	out, stderr, err = runCLI(t, "-c", cfg, "pipeline", "run", "status", "--json", `{"label":"n"}`)
	if err != nil || !strings.Contains(out, `"count": 1`) || !strings.Contains(out, `"label": "n"`) {
		t.Fatalf("run: %v\n%s\n%s", err, out, stderr)
	}
	// servers and stats run in parallel: either may start first.
	for _, want := range []string{`status \[[01]/3\] servers started`, `status \[3/3\] report finished`, "of status: succeeded", "report +succeeded"} {
		if !regexp.MustCompile(want).MatchString(stderr) {
			t.Errorf("run stderr lacks %q:\n%s", want, stderr)
		}
	}

	out, _, err = runCLI(t, "-c", cfg, "pipeline", "list", "--json")
	if err != nil || !strings.Contains(out, `"tool": "pipelines__status"`) {
		t.Errorf("list: %v\n%s", err, out)
	}
}
