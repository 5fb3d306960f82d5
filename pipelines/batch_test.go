package pipelines

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// problems returns the text of each problem in err.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		out = append(out, e.Error())
	}
	return out
}

func servedNames(ps []*Pipeline) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// writeDir writes files into a new folder and returns it.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A pipeline with any problem is not served, including the problems
// found once the whole step graph is known.
func TestProblemHoldsPipelineBack(t *testing.T) {
	ps, err := (&Loader{}).Parse(strings.NewReader(`name: fb
steps:
  - {id: y, tool: x__slow}
  - {id: x, tool: x__sum, on_error: rescue}
  - id: rescue
    tool: x__echo
    with: {message: "y=${{ steps.y.status }}"}
`), "fb.yaml")
	want := "fb.yaml:5:5: steps.rescue: fallback step rescue uses step y, which step x (whose on_error names it) does not wait for; add y to the needs of x"
	if got := problems(err); !slices.Equal(got, []string{want}) {
		t.Errorf("problems %q, want %q", got, want)
	}
	if len(ps) != 0 {
		t.Errorf("served %v despite the problem", servedNames(ps))
	}
}

const helloV1 = "name: hello\ndescription: v1\nsteps: [{id: a, tool: x__echo}]\n"

// Two definitions of one name are both reported, each naming the other.
// What was served stays served; without it, neither is, whatever the
// file order.
func TestDuplicateNames(t *testing.T) {
	dir := writeDir(t, map[string]string{"hello.yaml": helloV1, "another.yaml": strings.Replace(helloV1, "v1", "v2", 1), "z.yaml": "name: z\nsteps: [{id: a, tool: x__echo}]\n"})
	hello, another := filepath.Join(dir, "hello.yaml"), filepath.Join(dir, "another.yaml")

	ps, err := (&Loader{}).Load(dir)
	want := []string{
		another + `:1:7: name: pipeline "hello" is also defined at ` + hello + ":1:7; neither is served until one is renamed or removed",
		hello + `:1:7: name: pipeline "hello" is also defined at ` + another + ":1:7; neither is served until one is renamed or removed",
	}
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := servedNames(ps); !slices.Equal(got, []string{"z"}) {
		t.Errorf("served %v, want only z", got)
	}

	// hello.yaml was served before another.yaml appeared: it stays.
	for _, served := range []string{hello, another} {
		newcomer := another
		if served == another {
			newcomer = hello
		}
		l := &Loader{Served: func(name string) string {
			if name == "hello" {
				return served
			}
			return ""
		}}
		ps, err = l.Load(dir)
		want = []string{
			newcomer + `:1:7: name: pipeline "hello" is already served from ` + served + ":1:7; this definition is not served until one of them is renamed or removed",
			served + `:1:7: name: pipeline "hello" is also defined at ` + newcomer + ":1:7, which is not served; rename or remove one",
		}
		slices.Sort(want)
		if got := problems(err); !slices.Equal(got, want) {
			t.Errorf("served %s: problems\n%s\nwant\n%s", served, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Name+" "+p.Pos.File)
		}
		if !slices.Equal(got, []string{"hello " + served, "z " + filepath.Join(dir, "z.yaml")}) {
			t.Errorf("served %s: got %v", served, got)
		}
	}
}

// A pipeline calling a pipeline that does not load is held back too,
// with a problem naming the callee, as when the callee is deleted.
func TestBrokenCalleeHoldsCallerBack(t *testing.T) {
	ps, err := (&Loader{}).Parse(strings.NewReader(`name: broken
steps: [{id: a, tool: x__echo, wiht: {}}]
---
name: caller
steps:
  - id: a
    tool: pipelines__broken
---
name: outer
steps:
  - {id: a, tool: pipelines__caller}
---
name: fine
steps:
  - {id: a, tool: x__echo}
`), "p.yaml")
	want := []string{
		`p.yaml:2:32: steps[0].wiht: unknown key; did you mean "with"?`,
		"p.yaml:7:11: steps[0].tool: pipeline broken (pipelines__broken, p.yaml:1:7) has problems and is not served; caller is held back until it loads",
		"p.yaml:11:19: steps[0].tool: pipeline caller (pipelines__caller, p.yaml:4:7) has problems and is not served; outer is held back until it loads",
	}
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := servedNames(ps); !slices.Equal(got, []string{"fine"}) {
		t.Errorf("served %v, want only fine", got)
	}
}

// A file without a pipeline is a problem naming the file, not silence.
func TestEmptyFile(t *testing.T) {
	for name, src := range map[string]string{"empty": "", "comments": "# nothing yet\n\n# really\n", "separators": "---\n# c\n---\n"} {
		ps, err := (&Loader{}).Parse(strings.NewReader(src), "e.yaml")
		want := "e.yaml: the file holds no pipeline: it is empty or only comments; write a pipeline (steps, each with an id and a tool) or remove the file"
		if got := problems(err); len(ps) != 0 || !slices.Equal(got, []string{want}) {
			t.Errorf("%s: %v %q", name, ps, got)
		}
	}
	// An empty document before the pipeline is fine.
	if _, err := (&Loader{}).Parse(strings.NewReader("---\n# c\n---\nsteps: [{id: a, tool: x__y}]\n"), "e.yaml"); err != nil {
		t.Errorf("leading empty document: %v", err)
	}
}

// Suggestions are made only for near misses, and unknown tools get the
// nearest served name.
func TestSuggestions(t *testing.T) {
	l := &Loader{
		Tools:     func(name string) bool { return name == "everything__echo" || name == "everything__get-sum" },
		ToolNames: func() []string { return []string{"everything__echo", "everything__get-sum"} },
	}
	_, err := l.Parse(strings.NewReader(`steps:
  - {id: a, tool: everything__ecoh}
  - {id: b, tool: echo}
  - {id: c, tool: weather__forecast}
  - {id: first, tool: everything__echo, with: {x: "${{ steps.zz.outputs }}", y: "${{ steps.frist.outputs }}"}}
`), "s.yaml")
	want := []string{
		`s.yaml:2:19: steps[0].tool: unknown tool "everything__ecoh"; did you mean "everything__echo"?`,
		`s.yaml:3:19: steps[1].tool: unknown tool "echo"; did you mean "everything__echo"? a step names a tool as the gateway serves it`,
		"s.yaml:4:19: steps[2].tool: unknown tool \"weather__forecast\"; `skillgate tools list` shows the names of the tools the gateway serves",
		`s.yaml:5:62: steps[3].with.x: unknown step "zz"; the steps are a, b, c, first in ${{ steps.zz.outputs }}`,
		`s.yaml:5:92: steps[3].with.y: unknown step "frist"; did you mean "first"? in ${{ steps.frist.outputs }}`,
	}
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A tool ToolPending says may still come is a problem saying why, not an
// unknown tool; the others are still unknown.
func TestToolPending(t *testing.T) {
	l := &Loader{
		Tools: func(name string) bool { return name == "everything__echo" },
		ToolPending: func(name string) string {
			if strings.HasPrefix(name, "notes__") {
				return "server notes is failed: exit status 3"
			}
			return ""
		},
	}
	_, err := l.Parse(strings.NewReader(`steps:
  - {id: a, tool: notes__save}
  - {id: b, tool: everything__echo}
  - {id: c, tool: weather__forecast}
`), "p.yaml")
	want := []string{
		"p.yaml:2:19: steps[0].tool: notes__save: server notes is failed: exit status 3",
		"p.yaml:4:19: steps[2].tool: unknown tool \"weather__forecast\"; `skillgate tools list` shows the names of the tools the gateway serves",
	}
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// GitHub Actions spellings get what to write instead.
func TestGitHubActionsHints(t *testing.T) {
	_, err := (&Loader{}).Parse(strings.NewReader(`on: workflow_dispatch
env: {A: b}
steps:
  - name: Say hello
    id: a
    uses: everything__echo
    continue-on-error: true
    timeout-minutes: 5
  - id: b
    tool: x__y
    if: ${{ success() }}
    strategy: {matrix: {x: [1, 2]}}
    with: {m: "${{ matrix.x }}", o: "${{ steps.a.outcome }}", c: "${{ contains(inputs.s, 'a') }}"}
`), "g.yaml")
	want := []string{
		"g.yaml:1:1: on: unknown key: is GitHub Actions' trigger; a pipeline runs when its tool is called, so remove it",
		"g.yaml:2:1: env: unknown key: a pipeline has no env block; list the variables expressions may read in the gateway config's pipelines.env, and read them as env.NAME",
		"g.yaml:4:5: steps[0].name: unknown key: a step has no name: its id names it; keep a longer label in a YAML comment or an x- key such as x-name:",
		"g.yaml:6:5: steps[0].uses: unknown key: a step calls an MCP tool: write tool: <server>__<tool> in place of uses:",
		"g.yaml:7:5: steps[0].continue-on-error: unknown key: write on_error: continue",
		"g.yaml:8:5: steps[0].timeout-minutes: unknown key: write timeout: 5m (a duration such as 30s or 5m)",
		"g.yaml:11:13: steps[1].if: unknown name success; GitHub Actions' status functions do not exist here; a step runs once the steps it reads have settled, and its if can test steps.<id>.status (succeeded, failed, skipped, recovered) in ${{ success() }}",
		"g.yaml:12:5: steps[1].strategy: unknown key: write for_each: with the list (one ${{ }} or a YAML list) in place of strategy.matrix; with: reads the current one as item (and its position as index) in place of matrix.<key>",
		"g.yaml:13:20: steps[1].with.m: unknown name matrix; there is no matrix; in a step with for_each, item is the current item and index its position in ${{ matrix.x }}",
		"g.yaml:13:50: steps[1].with.o: unknown field outcome; a step's result is steps.<id>.status (succeeded, failed, skipped, recovered) in ${{ steps.a.outcome }}",
		`g.yaml:13:71: steps[1].with.c: unexpected token Operator("contains"); contains is an operator here: write a contains b (and x in list for a list) in ${{ contains(inputs.s, 'a') }}`,
	}
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Reading an environment variable the gateway does not allow says how to
// allow it.
func TestEnvNotAllowed(t *testing.T) {
	_, err := (&Loader{Env: map[string]string{"REGION": ""}}).Parse(strings.NewReader(`steps:
  - {id: a, tool: x__y, with: {r: "${{ env.REGON }}"}}
`), "e.yaml")
	want := "e.yaml:2:44: steps[0].with.r: env.REGON is not an allowed variable; add REGON to pipelines.env in the gateway config (allowed now: REGION) in ${{ env.REGON }}"
	if got := problems(err); !slices.Equal(got, []string{want}) {
		t.Errorf("problems %q\nwant %q", got, want)
	}
}
