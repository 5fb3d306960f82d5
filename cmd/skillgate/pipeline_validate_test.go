package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// pipeline validate, with the servers started, checks each step's
// arguments against its tool's input schema and prints what does not fit
// as warnings, once each; warnings alone exit 0.
func TestPipelineValidateWarnsOfArguments(t *testing.T) {
	bin := buildSkillgate(t)
	argv := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"p/greet.yaml": "description: echo, with the argument misspelled\nsteps:\n  - {id: a, tool: everything__echo, with: {msg: hi}}\n",
		"skillgate.yaml": `servers:
  everything:
    command: ` + argv[0] + `
    args: [` + strings.Join(argv[1:], ", ") + `]
pipelines: {dirs: [./p]}
`,
	})
	cfg, file := filepath.Join(dir, "skillgate.yaml"), filepath.Join(dir, "p", "greet.yaml")
	for _, args := range [][]string{{"--all"}, {file}} {
		_, stderr, code := runBin(t, bin, append([]string{"pipeline", "validate", "-c", cfg}, args...)...)
		for _, want := range []string{
			`greet.yaml:3:43: warning: steps[0].with: everything__echo requires the argument message; add it to with`,
			`greet.yaml:3:44: warning: steps[0].with.msg: everything__echo has no argument "msg" in its input schema; its arguments are message`,
		} {
			if code != 0 || strings.Count(stderr, want) != 1 {
				t.Errorf("validate %v: exit %d, want 0 and once %q in\n%s", args, code, want, stderr)
			}
		}
		if strings.Contains(stderr, "served with warnings") {
			t.Errorf("validate %v repeats the gateway's log:\n%s", args, stderr)
		}
	}
	out, _, code := runBin(t, bin, "pipeline", "validate", "-c", cfg, "--all", "--json")
	var got struct {
		OK       bool              `json:"ok"`
		Warnings int               `json:"warnings"`
		Problems []validateProblem `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || !got.OK || got.Warnings != 2 || len(got.Problems) != 2 ||
		got.Problems[0].Severity != "warning" || got.Problems[0].Column != 43 {
		t.Errorf("validate --json: exit %d, %v, %+v\n%s", code, err, got, out)
	}
	// Without the servers, arguments are not checked.
	if _, stderr, code := runBin(t, bin, "pipeline", "validate", "-c", cfg, "--all", "--no-tools"); code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("validate --no-tools: exit %d\n%s", code, stderr)
	}
}

// pipeline validate (--all and files) tells of a step calling a tool of a
// server that failed as the gateway does, "server broken is failed: <its
// last error>", not as an unknown tool.
func TestPipelineValidateNamesFailedServer(t *testing.T) {
	bin := buildSkillgate(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"p/usebroken.yaml": "steps:\n  - {id: a, tool: broken__x}\n",
		"skillgate.yaml": `servers:
  broken:
    command: sh
    args: ["-c", "echo boom >&2; exit 3"]
pipelines: {dirs: [./p]}
`,
	})
	cfg, file := filepath.Join(dir, "skillgate.yaml"), filepath.Join(dir, "p", "usebroken.yaml")
	for _, args := range [][]string{{"--all"}, {file}} {
		_, stderr, code := runBin(t, bin, append([]string{"pipeline", "validate", "-c", cfg}, args...)...)
		want := "usebroken.yaml:2:19: steps[0].tool: broken__x: server broken is failed: "
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "boom") || strings.Contains(stderr, "unknown tool") {
			t.Errorf("validate %v: exit %d, want 1 and %q<its last error> in\n%s", args, code, want, stderr)
		}
	}
}
