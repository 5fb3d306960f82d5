package pipelines

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// warnings lists the warnings of ps but the missing descriptions (see
// TestDescriptionWarning), which most test pipelines lack.
func warnings(ps []*Pipeline) []string {
	var out []string
	for _, p := range ps {
		for _, w := range p.Warnings {
			if w.Field != "description" {
				out = append(out, w.Error())
			}
		}
	}
	return out
}

// Pipelines calling themselves, directly or through others, are found at
// load: each gets a problem at its call, with the loop and where each call
// of it is written, and is held back with the pipelines that call it. A
// loop through a step that may not run is a warning.
func TestPipelineCycles(t *testing.T) {
	ps, err := (&Loader{}).Parse(strings.NewReader(`name: self
steps: [{id: a, tool: pipelines__self}]
---
name: ping
steps:
  - {id: a, tool: x__echo}
  - {id: b, tool: pipelines__pong}
---
name: pong
steps: [{id: a, tool: pipelines__tick}]
---
name: tick
steps: [{id: a, tool: pipelines__ping}]
---
name: user
steps: [{id: a, tool: pipelines__ping}]
---
name: maybe
inputs: {type: object, properties: {deep: {type: boolean, default: false}}}
steps:
  - {id: a, tool: pipelines__back, if: "${{ inputs.deep }}"}
---
name: back
steps: [{id: a, tool: pipelines__maybe, with: {deep: false}}]
---
name: fine
steps: [{id: a, tool: pipelines__back}]
---
name: each
steps: [{id: a, tool: pipelines__each, for_each: [1, "${{ 2 }}"]}]
`), "c.yaml")
	want := []string{
		"c.yaml:2:23: steps[0].tool: pipelines__self calls itself: pipelines__self -> pipelines__self (at c.yaml:2:23); the call-chain guard refuses such a call whenever it runs, so self is not served; remove one of these calls",
		"c.yaml:7:19: steps[1].tool: pipelines__ping calls itself through pipelines__pong, pipelines__tick: pipelines__ping -> pipelines__pong (at c.yaml:7:19) -> pipelines__tick (at c.yaml:10:23) -> pipelines__ping (at c.yaml:13:23); the call-chain guard refuses such a call whenever it runs, so ping is not served; remove one of these calls",
		"c.yaml:10:23: steps[0].tool: pipelines__pong calls itself through pipelines__tick, pipelines__ping: pipelines__pong -> pipelines__tick (at c.yaml:10:23) -> pipelines__ping (at c.yaml:13:23) -> pipelines__pong (at c.yaml:7:19); the call-chain guard refuses such a call whenever it runs, so pong is not served; remove one of these calls",
		"c.yaml:13:23: steps[0].tool: pipelines__tick calls itself through pipelines__ping, pipelines__pong: pipelines__tick -> pipelines__ping (at c.yaml:13:23) -> pipelines__pong (at c.yaml:7:19) -> pipelines__tick (at c.yaml:10:23); the call-chain guard refuses such a call whenever it runs, so tick is not served; remove one of these calls",
		"c.yaml:16:23: steps[0].tool: pipeline ping (pipelines__ping, c.yaml:4:7) has problems and is not served; user is held back until it loads",
		"c.yaml:30:23: steps[0].tool: pipelines__each calls itself: pipelines__each -> pipelines__each (at c.yaml:30:23); the call-chain guard refuses such a call whenever it runs, so each is not served; remove one of these calls",
	}
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := servedNames(ps); !slices.Equal(got, []string{"maybe", "back", "fine"}) {
		t.Errorf("served %v, want maybe, back and fine", got)
	}
	wantWarn := []string{
		"c.yaml:21:19: warning: steps[0].tool: pipelines__maybe may call itself: pipelines__maybe -> pipelines__back (at c.yaml:21:19) -> pipelines__maybe (at c.yaml:24:23); a call that closes this loop is refused when it runs, so make sure the if, for_each or on_error that may skip a step on it always does",
		"c.yaml:24:23: warning: steps[0].tool: pipelines__back may call itself: pipelines__back -> pipelines__maybe (at c.yaml:24:23) -> pipelines__back (at c.yaml:21:19); a call that closes this loop is refused when it runs, so make sure the if, for_each or on_error that may skip a step on it always does",
	}
	if got := warnings(ps); !slices.Equal(got, wantWarn) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantWarn, "\n"))
	}
}

// Each step's arguments are checked against the inputs of the pipeline
// it calls (problems: both are compiled together, and such a call would
// fail or pass what the callee cannot read), and against a tool's input
// schema from ToolSchema (warnings: the server owns that schema).
func TestStepArguments(t *testing.T) {
	schemas := map[string]string{
		"x__echo": `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`,
		"x__sum":  `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{"type":"number","default":0}},"required":["a","b","c"]}`,
		"x__env":  `{"type":"object","properties":{}}`,
		"x__open": `{"type":"object","properties":{"a":{}},"additionalProperties":true}`,
	}
	l := &Loader{ToolSchema: func(name string) json.RawMessage {
		if s, ok := schemas[name]; ok {
			return json.RawMessage(s)
		}
		return nil
	}}
	ps, err := l.Parse(strings.NewReader(`name: callee
inputs:
  type: object
  properties: {city: {type: string}, days: {type: integer, default: 3}, unit: {type: string}}
  required: [city, days, unit]
steps: [{id: a, tool: x__echo, with: {message: "${{ inputs.city }}"}}]
---
name: caller
steps:
  - id: a
    tool: pipelines__callee
    with: {citty: Oslo, unit: C}
  - {id: b, tool: pipelines__callee}
  - {id: c, tool: pipelines__callee, with: "${{ {city: 'Oslo'} }}"}
---
name: upstream
steps:
  - id: a
    tool: x__echo
    with: {mesage: hi}
  - {id: b, tool: x__sum, with: {a: 1}}
  - {id: c, tool: x__env, with: {x: 1}}
  - {id: d, tool: x__open, with: {anything: 1}}
  - {id: e, tool: x__unknown, with: {anything: 1}}
  - {id: f, tool: x__sum, with: {a: 1, b: "${{ steps.a.outputs }}"}}
`), "a.yaml")
	want := []string{
		`a.yaml:12:12: steps[0].with.citty: pipelines__callee has no argument "citty" in its input schema; did you mean "city"?`,
		"a.yaml:12:11: steps[0].with: pipelines__callee requires the argument city; add it to with",
		"a.yaml:13:5: steps[1].with: pipelines__callee requires the arguments city and unit; add them to with",
	}
	slices.Sort(want)
	if got := problems(err); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := servedNames(ps); !slices.Equal(got, []string{"callee", "upstream"}) {
		t.Errorf("served %v, want callee and upstream", got)
	}
	wantWarn := []string{
		`a.yaml:20:12: warning: steps[0].with.mesage: x__echo has no argument "mesage" in its input schema; did you mean "message"?`,
		"a.yaml:20:11: warning: steps[0].with: x__echo requires the argument message; add it to with",
		"a.yaml:21:33: warning: steps[1].with: x__sum requires the argument b; add it to with",
		`a.yaml:22:34: warning: steps[2].with.x: x__env has no argument "x" in its input schema; it takes no arguments`,
	}
	slices.SortFunc(wantWarn, strings.Compare)
	got := warnings(ps)
	slices.Sort(got)
	if !slices.Equal(got, wantWarn) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantWarn, "\n"))
	}
}

// Problems of inline pipelines name the pipeline (its key, or its place in
// a list) as well as the config file's line, whichever check finds them.
func TestInlineProblemsNamePipeline(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"mapping", `hello:
  steps:
    - {id: a, tool: x__y, with: {m: "${{ steps.nope.outputs }}"}}
bye:
  steps:
    - {id: a, tool: pipelines__hello}
loop:
  steps:
    - {id: a, tool: pipelines__loop}
`},
		{"list", `- name: hello
  steps:
    - {id: a, tool: x__y, with: {m: "${{ steps.nope.outputs }}"}}
- name: bye
  steps:
    - {id: a, tool: pipelines__hello}
- name: loop
  steps:
    - {id: a, tool: pipelines__loop}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.src), &doc); err != nil {
				t.Fatal(err)
			}
			_, err := (&Loader{}).ParseNode(doc.Content[0], "skillgate.yaml")
			label := map[string][]string{"mapping": {"hello.", "bye.", "loop."}, "list": {"[0].", "[1].", "[2]."}}[tc.name]
			want := []string{
				`skillgate.yaml:3:48: ` + label[0] + `steps[0].with.m: unknown step "nope"; the steps are a in ${{ steps.nope.outputs }}`,
				"skillgate.yaml:6:21: " + label[1] + "steps[0].tool: pipeline hello (pipelines__hello, ",
				"skillgate.yaml:9:21: " + label[2] + "steps[0].tool: pipelines__loop calls itself: ",
			}
			got := problems(err)
			if len(got) != len(want) {
				t.Fatalf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for i := range want {
				if !strings.HasPrefix(got[i], want[i]) {
					t.Errorf("problem %d: %s\nwant %s...", i, got[i], want[i])
				}
			}
		})
	}

	// Two definitions of one name, one inline: both say which.
	dir := writeDir(t, map[string]string{"hello.yaml": helloV1})
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("hello:\n  steps: [{id: a, tool: x__y}]\n"), &doc); err != nil {
		t.Fatal(err)
	}
	_, err := (&Loader{Inline: doc.Content[0], InlineFile: "skillgate.yaml"}).Load(dir)
	got := problems(err)
	if len(got) != 2 || !strings.HasPrefix(got[1], "skillgate.yaml:2:3: hello.name: pipeline \"hello\" is also defined at "+filepath.Join(dir, "hello.yaml")) {
		t.Errorf("problems %q", got)
	}
}

// Overlay compiles a file as if written, over one on disk or beside them,
// without touching the folder.
func TestLoadOverlay(t *testing.T) {
	dir := writeDir(t, map[string]string{"hello.yaml": helloV1})
	hello, added := filepath.Join(dir, "hello.yaml"), filepath.Join(dir, "added.yaml")
	l := &Loader{Overlay: map[string][]byte{
		hello: []byte("name: hello\ndescription: v2\nsteps: [{id: a, tool: x__echo}]\n"),
		added: []byte("name: added\nsteps: [{id: a, tool: pipelines__hello}]\n"),
	}}
	ps, err := l.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "added" || ps[0].Pos.File != added || ps[1].Description != "v2" {
		t.Errorf("got %v", servedNames(ps))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files", len(entries))
	}
	// A folder that does not exist yet is as if created for the file.
	missing := filepath.Join(dir, "new")
	l.Overlay = map[string][]byte{filepath.Join(missing, "n.yaml"): []byte("steps: [{id: a, tool: x__y}]\n")}
	if ps, err := l.Load(missing); err != nil || len(ps) != 1 || ps[0].Name != "n" {
		t.Errorf("missing folder: %v %v", servedNames(ps), err)
	}
}
