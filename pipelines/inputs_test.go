package pipelines

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The inputs schema is checked when the pipeline loads: unknown keywords,
// types that do not exist, and what the metaschema rejects, each where it
// is written.
func TestInputsSchemaChecked(t *testing.T) {
	for _, tc := range []struct{ name, inputs, want string }{
		{"type typo", "{type: object, properties: {n: {type: integr}}}",
			`i.yaml:1:47: inputs.properties.n.type: "integr" is not a JSON Schema type; did you mean "integer"?`},
		{"typ", "{type: object, properties: {n: {typ: string}}}",
			`i.yaml:1:41: inputs.properties.n.typ: unknown JSON Schema keyword; did you mean "type"?`},
		{"requierd", "{type: object, properties: {n: {type: string}}, requierd: [n]}",
			`i.yaml:1:57: inputs.requierd: unknown JSON Schema keyword; did you mean "required"?`},
		{"property beside type", "{type: object, city: {type: string}}",
			"i.yaml:1:24: inputs.city: unknown JSON Schema keyword; write x-city for a note of your own (properties go under properties:)"},
		{"metaschema", "{type: object, properties: {n: {type: integer, minimum: '3'}}}",
			"i.yaml:1:65: inputs.properties.n.minimum: not a valid JSON Schema: got string, want number"},
		{"bad pattern", "{type: object, properties: {s: {type: string, pattern: '(['}}}",
			`i.yaml:1:64: inputs.properties.s.pattern: not a valid JSON Schema: '([' is not valid regex`},
		{"external $ref", "{type: object, properties: {s: {$ref: 'file:///etc/passwd'}}}", "i.yaml:1:47: inputs.properties.s.$ref: the inputs schema refers to file:///etc/passwd; it may only $ref its own $defs"},
		// GitHub Actions' inputs: one hint, not a problem per input.
		{"GitHub Actions style", "{title: {description: A title, required: true, type: string}, count: {type: number, default: 2}}",
			"i.yaml:1:9: inputs: this looks like GitHub Actions inputs; write inputs as JSON Schema: type: object, properties: {count: {type: ...}, title: {type: ...}}, required: [title]"},
		{"x- and $defs are fine", "{type: object, x-note: hi, $defs: {c: {type: string, enum: [a]}}, properties: {s: {$ref: '#/$defs/c'}}}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkInputs(t, tc.inputs, tc.want) })
	}
}

// A default that breaks the schema it is written in is a load error where
// the default is, not a failure of every call that leaves the argument
// out; defaults are checked wherever a schema may hold one.
func TestInputsDefaultsChecked(t *testing.T) {
	for _, tc := range []struct{ name, inputs, want string }{
		{"integer", "{type: object, properties: {n: {type: integer, default: abc}}}",
			`i.yaml:1:65: inputs.properties.n.default: the default "abc" does not fit its own schema, so every call that leaves it out would fail: it must be integer, got string; change the default or the schema`},
		{"enum", "{type: object, properties: {c: {type: string, enum: [red, blue], default: green}}}",
			`i.yaml:1:83: inputs.properties.c.default: the default "green" does not fit its own schema, so every call that leaves it out would fail: it must be one of "red", "blue", got "green"`},
		{"minimum", "{type: object, properties: {n: {type: number, minimum: 1, default: 0}}}",
			"i.yaml:1:76: inputs.properties.n.default: the default 0 does not fit its own schema, so every call that leaves it out would fail: it must be at least 1, got 0"},
		{"in items", "{type: object, properties: {l: {type: array, items: {type: string, maxLength: 2, default: abc}}}}",
			`i.yaml:1:99: inputs.properties.l.items.default: the default "abc" does not fit its own schema, so every call that leaves it out would fail: it must be at most 2 characters long, got 3`},
		{"object default", "{type: object, properties: {o: {type: object, properties: {k: {type: integer}}, default: {k: x}}}}",
			`i.yaml:1:98: inputs.properties.o.default: the default {"k":"x"} does not fit its own schema, so every call that leaves it out would fail: its k must be integer, got string`},
		{"through $ref", "{type: object, $defs: {c: {enum: [a, b]}}, properties: {s: {$ref: '#/$defs/c', default: z}}}",
			`i.yaml:1:97: inputs.properties.s.default: the default "z" does not fit its own schema, so every call that leaves it out would fail: it must be one of "a", "b", got "z"`},
		{"in $defs", "{type: object, $defs: {c: {type: string, default: 3}}}",
			"i.yaml:1:59: inputs.$defs.c.default: the default 3 does not fit its own schema, so every call that leaves it out would fail: it must be string, got number; change the default or the schema"},
		{"good defaults", "{type: object, properties: {n: {type: integer, default: 3}, c: {enum: [red], default: red}, l: {type: array, default: [a]}}}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkInputs(t, tc.inputs, tc.want) })
	}
}

// Arguments are validated against the whole inputs schema, and the error
// names the argument.
func TestInputsValidated(t *testing.T) {
	p := mustLoad(t, `
inputs:
  type: object
  properties:
    region: {type: string, enum: [eu, us]}
    n: {type: integer, minimum: 1, maximum: 10, default: 3}
    code: {type: string, pattern: '^[A-Z]{3}$', minLength: 3}
    tags: {type: array, items: {type: string, maxLength: 4}, maxItems: 2}
  required: [region]
  additionalProperties: false
steps:
  - {id: a, tool: echo, with: {message: "${{ inputs.region }} ${{ inputs.n }}"}}
outputs: {out: "${{ steps.a.outputs }}"}
`)
	caller := newFake(map[string]toolFunc{"echo": echo})
	for _, tc := range []struct{ args, want string }{
		{`{"region":"eu"}`, ""},
		{`{"region":"mars"}`, `region must be one of "eu", "us", got "mars"`},
		{`{"region":"eu","n":0}`, "n must be at least 1, got 0"},
		{`{"region":"eu","n":11}`, "n must be at most 10, got 11"},
		{`{"region":"eu","code":"abc"}`, `code must match the pattern ^[A-Z]{3}$, got "abc"`},
		{`{"region":"eu","code":"A"}`, "code must be at least 3 characters long, got 1"},
		{`{"region":"eu","tags":["a","toolong"]}`, "tags[1] must be at most 4 characters long, got 7"},
		{`{"region":"eu","tags":["a","b","c"]}`, "tags must have at most 2 items, got 3"},
		{`{}`, "region is required"},
		{`{"region":"eu","nope":1}`, `pipeline test has no input "nope"`},
	} {
		res, err := (&Runner{}).Run(context.Background(), p, []byte(tc.args), caller, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, res)
		switch {
		case tc.want == "" && r.IsError:
			t.Errorf("%s: %s", tc.args, r.text())
		case tc.want != "" && (!r.IsError || !strings.Contains(r.text(), "invalid arguments") || !strings.Contains(r.text(), tc.want)):
			t.Errorf("%s: got %s, want %q", tc.args, r.text(), tc.want)
		}
	}
	if _, err := p.Plan([]byte(`{"region":"mars"}`)); !errors.Is(err, ErrInvalidArguments) {
		t.Errorf("plan with bad arguments: %v", err)
	}
}

// checkInputs loads a pipeline whose inputs schema is inputs and checks
// that it loads with no problem (want "") or with exactly one problem,
// starting with want, that keeps the pipeline from being served.
func checkInputs(t *testing.T, inputs, want string) {
	t.Helper()
	src := "inputs: " + inputs + "\nsteps: [{id: a, tool: x__y}]\n"
	ps, err := (&Loader{}).Parse(strings.NewReader(src), "i.yaml")
	got := problems(err)
	switch {
	case want == "" && err != nil:
		t.Errorf("problems %q, want none", got)
	case want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], want) || len(ps) != 0):
		t.Errorf("problems %q, want one starting %q", got, want)
	}
}
