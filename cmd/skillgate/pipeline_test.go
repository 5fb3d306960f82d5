package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
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

// writeFiles writes files relative to dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A pipeline with a problem found late (once the graph is known) is
// reported and not also called ok.
func TestPipelineValidateLateProblem(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml": "pipelines: {dirs: [./p]}\n",
		"p/fb.yaml": `steps:
  - {id: y, tool: admin__servers}
  - {id: x, tool: admin__stats, on_error: rescue}
  - {id: rescue, tool: admin__servers, with: {s: "${{ steps.y.status }}"}}
`,
	})
	_, stderr, err := runCLI(t, "-c", filepath.Join(dir, "skillgate.yaml"), "pipeline", "validate", "--all", "--no-tools")
	var code exitError
	if !errors.As(err, &code) || code != 1 || !strings.Contains(stderr, "fb.yaml:4:5: steps.rescue: fallback step rescue uses step y") ||
		strings.Contains(stderr, "ok (") || !strings.Contains(stderr, "\n1 problem\n") {
		t.Errorf("validate: %v\n%s", err, stderr)
	}
}

// An allowed environment variable that is not set reads as "", and does
// not keep the pipeline from loading.
func TestPipelineEnvUnset(t *testing.T) {
	const unset = "SKILLGATE_TEST_NEVER_SET"
	if _, ok := os.LookupEnv(unset); ok {
		t.Skip(unset + " is set")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml": "pipelines: {dirs: [./p], env: [" + unset + "]}\n",
		"p/region.yaml": `steps:
  - {id: a, tool: admin__servers, with: {region: "${{ coalesce(env.` + unset + `, 'eu') }}", raw: "[${{ env.` + unset + ` }}]"}}
`,
	})
	cfg := filepath.Join(dir, "skillgate.yaml")
	if _, stderr, err := runCLI(t, "-c", cfg, "pipeline", "validate", "--all", "--no-tools"); err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr)
	}
	out, stderr, err := runCLI(t, "-c", cfg, "pipeline", "run", "region", "--dry-run")
	if err != nil || !strings.Contains(out, `with: {"raw":"[]","region":"eu"}`) {
		t.Errorf("dry run: %v\n%s%s", err, out, stderr)
	}
}

func TestUnescapeHTML(t *testing.T) {
	in := `{"a\u003e":"x \u003e y \u0026 \u003Cz\u003e \\u003e \"\u003e\" \u00e9","n":1}`
	want := `{"a>":"x > y & <z> \\u003e \">\" \u00e9","n":1}`
	if got := string(unescapeHTML([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var a, b any
	if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal(unescapeHTML([]byte(in)), &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("the value changed: %v, %v", a, b)
	}
}

// skillgate validate checks the pipelines the config defines, inline and
// in its folders, as well as the config itself.
func TestValidateChecksPipelines(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"inl.yaml": `pipelines:
  dirs: [./p]
  inline:
    inl:
      steps:
        - {id: a, tool: x__echo, with: {message: "${{ steps.zz.outputs }}"}}
        - id: b
          tool: x__echo
          wiht: {message: x}
`,
		"p/badref.yaml": "steps:\n  - {id: fetch, tool: x__echo}\n  - {id: use, tool: x__echo, with: {m: \"${{ steps.fecth.outputs }}\"}}\n",
		"p/good.yaml":   "steps: [{id: a, tool: x__echo}]\n",
		"good.yaml":     "pipelines: {dirs: [./p2]}\n",
		"p2/good.yaml":  "steps: [{id: a, tool: x__echo}]\n",
	})
	_, stderr, err := runCLI(t, "validate", filepath.Join(dir, "inl.yaml"))
	var code exitError
	if !errors.As(err, &code) || code != 1 {
		t.Errorf("validate: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		filepath.Join(dir, "inl.yaml") + `:6:61: inl.steps[0].with.message: unknown step "zz"; the steps are a, b`,
		filepath.Join(dir, "inl.yaml") + `:9:11: inl.steps[1].wiht: unknown key; did you mean "with"?`,
		filepath.Join(dir, "p", "badref.yaml") + `:3:51: steps[1].with.m: unknown step "fecth"; did you mean "fetch"?`,
		"3 problems in its pipelines",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate output lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, ": ok") {
		t.Errorf("validate says ok:\n%s", stderr)
	}
	good := filepath.Join(dir, "good.yaml")
	if _, stderr, err := runCLI(t, "validate", good); err != nil || !strings.Contains(stderr, good+": ok (1 pipeline; tool names are not checked") {
		t.Errorf("validate good: %v\n%s", err, stderr)
	}
}

// JSON output keeps <, > and & as they are.
func TestPipelineJSONNotHTMLEscaped(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"p.yaml": "steps: [{id: a}]\n"})
	out, _, err := runCLI(t, "pipeline", "validate", "--no-tools", "--json", filepath.Join(dir, "p.yaml"))
	if err == nil || !strings.Contains(out, "add tool: <server>__<tool>") || strings.Contains(out, `\u003c`) {
		t.Errorf("validate --json: %v\n%s", err, out)
	}
}

// An unknown tool's problem suggests the nearest tool the config serves.
func TestPipelineValidateSuggestsTool(t *testing.T) {
	cfg, pdir := pipelineCLIConfig(t)
	bad := filepath.Join(pdir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("steps: [{id: a, tool: admin__stat}, {id: b, tool: pipelines__statu}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{bad}, {"--all"}} {
		_, stderr, err := runCLI(t, append([]string{"-c", cfg, "pipeline", "validate"}, args...)...)
		if err == nil || !strings.Contains(stderr, `unknown tool "admin__stat"; did you mean "admin__stats"?`) ||
			!strings.Contains(stderr, `unknown tool "pipelines__statu"; did you mean "pipelines__status"?`) {
			t.Errorf("validate %v: %v\n%s", args, err, stderr)
		}
		// Each problem is told once: not also by the gateway's summary.
		if strings.Contains(stderr, "with problems are not served") {
			t.Errorf("validate %v repeats the gateway's log:\n%s", args, stderr)
		}
	}
}

// Files validated together are checked for names used twice, as the
// gateway would.
func TestPipelineValidateDuplicateFiles(t *testing.T) {
	dir := t.TempDir()
	body := "name: hello\nsteps: [{id: a, tool: x__echo}]\n"
	writeFiles(t, dir, map[string]string{"hello.yaml": body, "another.yaml": body})
	a, h := filepath.Join(dir, "another.yaml"), filepath.Join(dir, "hello.yaml")
	_, stderr, err := runCLI(t, "pipeline", "validate", "--no-tools", h, a)
	for _, want := range []string{
		h + `:1:1: name: pipeline "hello" is also defined at ` + a + ":1:1; neither is served",
		a + `:1:1: name: pipeline "hello" is also defined at ` + h + ":1:1; neither is served",
		"2 problems",
	} {
		if err == nil || !strings.Contains(stderr, want) || strings.Contains(stderr, ": ok (") {
			t.Errorf("validate: %v, want %q in\n%s", err, want, stderr)
		}
	}
}
