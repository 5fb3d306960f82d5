package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A requires naming a service the gateway does not have is a load problem
// at its place, with the nearest name, as a server's requires is in the
// config; the pipeline is not served.
func TestRequiresUnknownService(t *testing.T) {
	l := &Loader{Services: func() []string { return []string{"dead", "good", "man", "sick"} }}
	src := "name: p_typo\nrequires: [good, sik]\nsteps: [{id: a, tool: x__y}]\n---\nname: fine\nrequires: sick\nsteps: [{id: a, tool: x__y}]\n"
	ps, err := l.Parse(strings.NewReader(src), "p.yaml")
	want := `p.yaml:2:18: requires[1]: unknown service "sik"; did you mean "sick"?`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if len(ps) != 1 || ps[0].Name != "fine" {
		t.Errorf("served %v, want only fine", ps)
	}
	l.Services = func() []string { return nil }
	_, err = l.Parse(strings.NewReader("requires: [db]\nsteps: [{id: a, tool: x__y}]\n"), "q.yaml")
	if want := `q.yaml:1:12: requires[0]: unknown service "db"; the config declares no services; define it under services: or remove it`; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if _, err := (&Loader{}).Parse(strings.NewReader(src), "p.yaml"); err != nil {
		t.Errorf("without Services every name is accepted, got %v", err)
	}
}

// Builtins that build strings, lists and objects (split, upper, concat,
// fromJSON, ...) are charged to the evaluation's budget, so one in a loop
// cannot take the gateway's memory: the audit's map of split over a
// 6,000-character input grew the process to 595 MB.
func TestBuiltinAllocationsBudgeted(t *testing.T) {
	p := mustLoad(t, `
inputs: {type: object, properties: {s: {type: string}}}
steps: [{id: a, tool: t, with: {x: "${{ len(map(split(inputs.s, ''), split(inputs.s, ''))) }}"}}]
`)
	raw, err := new(Runner).Run(context.Background(), p, mustMarshal(map[string]any{"s": strings.Repeat("ab", 3000)}), newFake(map[string]toolFunc{"t": echo}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := decode(t, raw); !res.IsError || !strings.Contains(res.text(), "budget exceeded: the expression built more than 1000000 values") {
		t.Errorf("got %.300s", raw)
	}
	for _, src := range []string{
		`let s = repeat("a", 5000); len(map(1..5000, upper(s)))`,            // strings
		`let l = 1..5000; len(map(l, concat(l, l)))`,                        // lists
		`len(reduce(1..3000, concat(#acc, [#]), []))`,                       // quadratic growth
		`let j = toJSON(map(1..1000, [#])); len(map(1..2000, fromJSON(j)))`, // nested values
	} {
		t.Run(src, func(t *testing.T) {
			p := mustLoad(t, oneStep(src))
			raw, err := new(Runner).Run(context.Background(), p, nil, newFake(map[string]toolFunc{"t": echo}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res := decode(t, raw); !res.IsError || !strings.Contains(res.text(), "budget exceeded") {
				t.Errorf("got %.300s", raw)
			}
		})
	}
	// Ordinary uses stay well inside the budget.
	evalEach(t, newEngine(Limits{}), map[string]any{
		`len(split(repeat("a,", 100000), ","))`:            100001,
		`len(map(1..1000, split("a b c", " ")))`:           1000,
		`upper(trim(" x "))`:                               "X",
		`len(fromJSON(toJSON(map(1..10000, [#, "x"]))))`:   10000,
		`sort(uniq(concat([3, 1], [1, 2])))`:               []int{1, 2, 3},
		`len(keys(fromJSON("{\"a\": 1, \"b\": [1, 2]}")))`: 2,
		`join(map(split("a-b", "-"), upper(#)), "+")`:      "A+B",
	})
}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// A step passing an argument whose type the loader knows (a constant, an
// interpolation, a typed expression) where the tool's input schema wants
// another type is a warning naming the step, the argument and both types.
func TestArgumentTypeWarnings(t *testing.T) {
	schema := json.RawMessage(`{"type": "object", "properties": {"message": {"type": "string"}, "n": {"type": ["integer", "null"]}, "f": {"type": "number"}, "any": {}}}`)
	l := &Loader{ToolSchema: func(string) json.RawMessage { return schema }}
	ps, err := l.Parse(strings.NewReader(`name: p
inputs: {type: object, properties: {n: {type: integer}, s: {type: string}, o: {}}}
steps:
  - id: a
    tool: x__echo
    with: {message: "${{ inputs.n * 2 }}", n: "${{ inputs.s }}", f: "${{ inputs.n }}", any: 1}
  - id: b
    tool: x__echo
    with:
      message: 5
      n: "n ${{ inputs.n }}"
      f: "${{ inputs.o }}"
  - id: c
    tool: x__echo
    with: {message: "${{ string(inputs.n) }}", n: 3, f: 1.5}
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`p.yaml:6:12: warning: steps[0].with.message: step a passes an integer as message (${{ inputs.n * 2 }}), but x__echo's input schema wants a string; convert it with string(...), or fix the schema`,
		`p.yaml:6:44: warning: steps[0].with.n: step a passes a string as n (${{ inputs.s }}), but x__echo's input schema wants an integer or a null; convert it with int(...), or fix the schema`,
		`p.yaml:10:7: warning: steps[1].with.message: step b passes an integer as message (a constant), but x__echo's input schema wants a string; convert it with string(...), or fix the schema`,
		`p.yaml:11:7: warning: steps[1].with.n: step b passes a string as n (text with ${{ }} in it), but x__echo's input schema wants an integer or a null; convert it with int(...), or fix the schema`,
	}
	if got := warnings(ps); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A step's record times its own calls: time spent waiting for a slot of
// the run's concurrency is Queued, not part of Started and Duration, and
// Attempts counts tries of one call, not for_each items.
func TestStepTimesExcludeQueue(t *testing.T) {
	p := mustLoad(t, "concurrency: 1\nsteps:\n  - {id: a, tool: gate}\n  - {id: b, tool: gate}\n  - {id: c, tool: quick, for_each: [1, 2, 3]}\n")
	release := make(chan struct{})
	f := newFake(map[string]toolFunc{
		"gate": func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
			<-release
			return textResult("ok"), nil
		},
		"quick": echo,
	})
	r := new(Runner)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := r.Run(context.Background(), p, nil, f, nil); err != nil {
			t.Error(err)
		}
	}()
	// Wait until one gate step has its slot and the other waits for it.
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("the steps did not start: %+v", r.Runs())
		}
		runs := r.Runs()
		if len(runs) == 1 && f.count("gate") == 1 && runs[0].Steps[0].Status == StatusRunning && runs[0].Steps[1].Status == StatusRunning {
			break
		}
		runtime.Gosched()
	}
	released := time.Now()
	close(release)
	<-done
	rec := r.Runs()[0]
	waited := rec.Steps[0]
	if waited.Started.Before(rec.Steps[1].Started) {
		waited = rec.Steps[1]
	}
	if waited.Started.Before(released) || waited.Queued <= 0 {
		t.Errorf("the step that waited for the slot: started %v (released at %v), queued %v; want started after its wait, and the wait as queued", waited.Started, released, waited.Queued)
	}
	if c := rec.Steps[2]; c.Attempts != 1 || c.Items != 3 || c.Calls != 3 {
		t.Errorf("for_each step: attempts %d, items %d, calls %d; want 1 attempt, 3 items, 3 calls", c.Attempts, c.Items, c.Calls)
	}
}

// A for_each whose first failing item stops the others counts those as
// canceled, not failed.
func TestForEachCanceledItemsNotFailed(t *testing.T) {
	p := mustLoad(t, "steps:\n  - {id: a, tool: t, for_each: [1, 2], with: {i: \"${{ item }}\"}}\n")
	second := make(chan struct{})
	f := newFake(map[string]toolFunc{"t": func(ctx context.Context, a map[string]any) (json.RawMessage, error) {
		if a["i"] == 1.0 {
			<-second
			return nil, errors.New("boom")
		}
		close(second)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	r := new(Runner)
	raw, err := r.Run(context.Background(), p, nil, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, raw).text(); !strings.Contains(got, "1 of 2 items failed and 1 were canceled; first: item 1: boom") {
		t.Errorf("got %q", got)
	}
	if s := r.Runs()[0].Steps[0]; s.ItemsFailed != 1 {
		t.Errorf("items failed %d, want 1", s.ItemsFailed)
	}
}

// A problem of the inputs schema does not hide a default that breaks its
// own property's schema: both are reported.
func TestInputsProblemAndBadDefault(t *testing.T) {
	for _, inputs := range []string{
		"{type: object, requierd: [n], properties: {n: {type: integer, default: abc}}}",                    // an unknown keyword
		"{type: object, properties: {m: {type: integer, minimum: '3'}, n: {type: integer, default: abc}}}", // what the metaschema rejects
	} {
		_, err := (&Loader{}).Parse(strings.NewReader("inputs: "+inputs+"\nsteps: [{id: a, tool: x__y}]\n"), "i.yaml")
		got := problems(err)
		if len(got) != 2 || !strings.Contains(got[1], `inputs.properties.n.default: the default "abc" does not fit its own schema`) {
			t.Errorf("%s: problems %q, want the schema's and the default's", inputs, got)
		}
	}
}

// Load messages: an empty steps list says it is empty, on_error does not
// offer the step itself, a misspelt field of a step or an input gets the
// nearest name, and inputs read without an inputs schema are a warning.
func TestLoadWording(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"steps: []\n", "p.yaml:1:8: steps: the list of steps is empty; add at least one step, with an id and a tool"},
		{"steps: [{id: a, tool: t, on_error: nowhere}, {id: b, tool: t}]\n", `p.yaml:1:36: steps[0].on_error: "nowhere" is neither fail, continue nor a step id; the choices are fail, continue, b`},
		{"steps: [{id: a, tool: t}, {id: b, tool: t, with: {x: \"${{ steps.a.output }}\"}}]\n", "p.yaml:1:67: steps[1].with.x: unknown field output; did you mean outputs? in ${{ steps.a.output }}"},
		{"inputs: {type: object, properties: {city: {type: string}}}\nsteps: [{id: a, tool: t, with: {x: \"${{ inputs.cty }}\"}}]\n", "p.yaml:2:48: steps[0].with.x: unknown field cty; did you mean city? in ${{ inputs.cty }}"},
		// || is for true/false: a default is ?? (or coalesce).
		{"inputs: {type: object, properties: {a: {type: string}}}\nsteps: [{id: x, tool: t, with: {m: \"${{ inputs.a || 'none' }}\"}}]\n",
			"p.yaml:2:50: steps[0].with.m: invalid operation: || (mismatched types string and string); || is for true and false: for a default write a ?? b (b when a is null) or coalesce(a, b) (also when a is \"\") in ${{ inputs.a || 'none' }}"},
		// The id it suggests is one expressions can write.
		{"steps: [{id: 1st, tool: t}]\n", `p.yaml:1:14: steps[0].id: "1st" is not a valid step id; use letters, digits and _, starting with a letter, so expressions can write steps.step_1st`},
		{"steps: [{id: a.b-c, tool: t}]\n", `p.yaml:1:14: steps[0].id: "a.b-c" is not a valid step id; use letters, digits and _, starting with a letter, so expressions can write steps.a_b_c`},
	} {
		if _, err := (&Loader{}).Parse(strings.NewReader(tc.src), "p.yaml"); err == nil || err.Error() != tc.want {
			t.Errorf("%s: got\n%v\nwant\n%s", tc.src, err, tc.want)
		}
	}
	ps, err := (&Loader{}).Parse(strings.NewReader("steps: [{id: a, tool: t, with: {x: \"${{ inputs.who }}\"}}]\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := warnings(ps); len(w) != 1 || !strings.HasPrefix(w[0], "p.yaml:1:48: warning: steps[0].with.x: inputs.who is not declared") {
		t.Errorf("warnings %q; want one about inputs.who", w)
	}
}

// An expression failing at run time names the argument (or output) it
// computes and where it is written.
func TestRuntimeErrorPlace(t *testing.T) {
	p := mustLoad(t, `steps:
  - id: a
    tool: t
  - id: b
    tool: t
    with:
      message: hi
      deep: {list: [1, "${{ steps.a.outputs.x.y }}"]}
`)
	raw, err := new(Runner).Run(context.Background(), p, nil, newFake(map[string]toolFunc{"t": func(context.Context, map[string]any) (json.RawMessage, error) {
		return structResult(map[string]any{"x": nil}), nil
	}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, raw).text(); !strings.Contains(got, "step b (t) failed: with.deep.list[1] (test.yaml:8:24): ${{ steps.a.outputs.x.y }}: steps.a.outputs.x is null") {
		t.Errorf("got %q", got)
	}
}

// A pipeline that times out names the step it stopped.
func TestTimeoutNamesStep(t *testing.T) {
	p := mustLoad(t, "timeout: 50ms\nsteps:\n  - {id: quick, tool: t}\n  - {id: slow, tool: wait, needs: [quick]}\n")
	raw, err := new(Runner).Run(context.Background(), p, nil, newFake(map[string]toolFunc{"t": echo, "wait": func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, raw).text(); !strings.Contains(got, "the pipeline timed out after 50ms while step slow (wait) ran;") {
		t.Errorf("got %q", got)
	}
}
