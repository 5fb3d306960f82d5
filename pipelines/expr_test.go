package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/expr-lang/expr/types"
)

// Hostile expressions are rejected at load or stopped by a budget at run
// time; none may hang or exhaust the process.
func TestHostileExpressions(t *testing.T) {
	deep := strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000)
	long := strings.Repeat("1 + ", 3000) + "1"
	// Deep nesting parses without exhausting the stack (the file size
	// bounds it); too many nodes are refused at load.
	if _, err := (&Loader{}).Parse(strings.NewReader(oneStep(deep)), "h.yaml"); err != nil {
		t.Errorf("deep nesting: %v", err)
	}
	if _, err := (&Loader{}).Parse(strings.NewReader(oneStep(long)), "h.yaml"); err == nil || !strings.Contains(err.Error(), "exceeds maximum allowed nodes") {
		t.Errorf("an expression of %d nodes: %v", 3000*2, err)
	}
	for _, src := range []string{
		`len(1..100000000)`,                                       // a huge range
		`let r = 1..999; all(r, all(r, all(r, true)))`,            // nested loops without allocation
		`reduce(1..64, #acc + #acc, "ab")`,                        // string doubling
		`len(repeat(repeat("x", 1000000), 1000000))`,              // repeat of repeat
		`len(replace(repeat("a", 100000), "", repeat("b", 100)))`, // quadratic replace
		`len(join(map(1..100000, repeat("x", 100000)), ""))`,      // join of many long strings
		`len(toJSON(map(1..100000, repeat("x", 100000))))`,        // JSON of many long strings
		`len(string(map(1..100000, repeat("x", 100000))))`,        // string() likewise
		`map(1..2000, map(1..2000, #))`,                           // memory
	} {
		t.Run(src, func(t *testing.T) {
			p := mustLoad(t, oneStep(src))
			raw, err := new(Runner).Run(context.Background(), p, nil, newFake(map[string]toolFunc{"t": echo}), nil)
			if err != nil {
				t.Fatal(err)
			}
			res := decode(t, raw)
			if !res.IsError || !strings.Contains(res.text(), "budget exceeded") {
				t.Errorf("got %.300s", raw)
			}
		})
	}
	// A big output of a step cannot be multiplied into a huge argument.
	p := mustLoad(t, `
steps:
  - id: big
    tool: big
  - id: a
    tool: t
    with: {x: "${{ map(1..1000, steps.big.outputs) }}"}
`)
	f := newFake(map[string]toolFunc{"t": echo, "big": func(context.Context, map[string]any) (json.RawMessage, error) {
		return textResult(strings.Repeat("x", 100000)), nil
	}})
	raw, _ := new(Runner).Run(context.Background(), p, nil, f, nil)
	if res := decode(t, raw); !res.IsError || !strings.Contains(res.text(), "budget exceeded") {
		t.Errorf("got %.300s", raw)
	}
}

func TestBudgetErrorsWrapErrBudget(t *testing.T) {
	e := newEngine(Limits{})
	pr, probs := e.compile(`reduce(1..64, #acc + #acc, "ab")`, newTypeEnv(envTypes()), nil)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if _, err := e.eval(context.Background(), pr, map[string]any{}); !errors.Is(err, ErrBudget) {
		t.Errorf("err = %v", err)
	}
}

// Functions beyond expr's builtins, and the guarded builtins, still work.
func TestFunctions(t *testing.T) {
	evalEach(t, newEngine(Limits{}), map[string]any{
		`json({"a": [1, 2]})`:            `{"a":[1,2]}`,
		`fromJSON("[1, 2]")[1]`:          2.0,
		`coalesce(nil, "", "x")`:         "x",
		`join(["a", "b"], "-")`:          "a-b",
		`join(split("a,b", ","))`:        "ab",
		`repeat("ab", 3)`:                "ababab",
		`replace("a.b", ".", "::")`:      "a::b",
		`string(1.5) + string([1])`:      "1.5[1]",
		`"a" + "b"`:                      "ab",
		`1 + 2`:                          3,
		`sum(map([1, 2, 3], # * 2))`:     12,
		`all([1, 2], # > 0)`:             true,
		`toJSON({"a": 1})`:               "{\n  \"a\": 1\n}",
		`upper(trim(" x "))`:             "X",
		`len(filter(1..10, # % 2 == 0))`: 5,
	})
}

// evalEach compiles and runs each expression of cases with e, in an
// empty environment, and compares its JSON with the wanted value's.
func evalEach(t *testing.T, e *engine, cases map[string]any) {
	t.Helper()
	for src, want := range cases {
		pr, probs := e.compile(src, newTypeEnv(envTypes()), nil)
		if len(probs) > 0 {
			t.Errorf("%s: %v", src, probs)
			continue
		}
		got, err := e.eval(context.Background(), pr, map[string]any{})
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if g, _ := json.Marshal(got); string(g) != mustJSON(want) {
			t.Errorf("%s = %s, want %s", src, g, mustJSON(want))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func envTypes() types.Map {
	return types.Map{meterName: meterType, "inputs": types.Map{types.Extra: types.Any}, "steps": types.Map{types.Extra: types.Any}, "env": types.Map{types.Extra: types.Any}}
}

// FuzzTemplate feeds arbitrary strings to the ${{ }} splitter and to the
// compiler: neither may panic, and a split must cover the whole string.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"", "plain", "${{ inputs.x }}", "a ${{ 1 + 2 }} b ${{ 'x}}' }}", "${{ {a: {b: 1}} }}",
		"${{", "${{ }}", "}}", "${{ \"unterminated }}", "${{ steps.a.outputs[0].b }}",
		"${{ map(1..3, # * 2) }}", "${{ let x = 1; x }}",
	} {
		f.Add(s)
	}
	e := newEngine(Limits{})
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := splitTemplate(s)
		if err != nil {
			return
		}
		for _, sg := range segs {
			if sg.off < 0 || sg.off+len(sg.text) > len(s) || s[sg.off:sg.off+len(sg.text)] != sg.text {
				t.Fatalf("segment %+v is not at its offset in %q", sg, s)
			}
			if sg.isExpr {
				pr, probs := e.compile(sg.text, newTypeEnv(envTypes()), func(string, int) []exprProblem { return nil })
				for _, p := range probs {
					if p.off < 0 || p.off > len(sg.text) {
						t.Fatalf("problem offset %d outside %q", p.off, sg.text)
					}
				}
				if pr != nil {
					ctx, cancel := context.WithCancel(context.Background())
					_, _ = e.eval(ctx, pr, map[string]any{"inputs": map[string]any{}, "steps": map[string]any{}, "env": map[string]any{}})
					cancel()
				}
			}
		}
	})
}

// FuzzParse feeds arbitrary documents to the loader: it may reject them,
// but must not panic, and every problem must be an *Error.
func FuzzParse(f *testing.F) {
	f.Add("steps: [{id: a, tool: t, with: {x: \"${{ inputs.y }}\"}}]")
	f.Add("name: n\ninputs: {type: object, properties: {a: {type: integer}}}\nsteps:\n  - id: a\n    tool: t\n    for_each: ${{ 1..inputs.a }}\n    with: {i: \"${{ item }}\"}\n")
	f.Add("a: &x [*x]")
	f.Fuzz(func(t *testing.T, src string) {
		_, err := (&Loader{}).Parse(strings.NewReader(src), "f.yaml")
		if err == nil {
			return
		}
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var pe *Error
			if !errors.As(e, &pe) {
				t.Fatalf("%v is not an *Error", e)
			}
		}
	})
}

// oneStep is a pipeline of one step whose argument x is ${{ src }}.
func oneStep(src string) string {
	return "steps:\n  - id: a\n    tool: t\n    with:\n      x: |-\n        ${{ " + src + " }}\n"
}
