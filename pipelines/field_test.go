package pipelines

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Reading a field of a result that is not an object says what the result
// is, instead of the expression VM's internals.
func TestFieldOfNonObject(t *testing.T) {
	caller := newFake(map[string]toolFunc{
		"echo": echo,
		"obj": func(context.Context, map[string]any) (json.RawMessage, error) {
			return structResult(map[string]any{"a": map[string]any{"b": 1}}), nil
		},
		"list": func(context.Context, map[string]any) (json.RawMessage, error) { return textResult(`[1, 2]`), nil },
	})
	for _, tc := range []struct{ tool, expr, want string }{
		{"echo", "steps.a.outputs.city", `steps.a.outputs is text ("hi"), not an object, so it has no field city`},
		{"list", "steps.a.outputs.city", "steps.a.outputs is a list, not an object, so it has no field city; index it, as in steps.a.outputs[0]"},
		{"obj", "steps.a.outputs.a.b.c", "steps.a.outputs.a.b is a number, not an object, so it has no field c"},
		{"obj", "steps.a.outputs.x.y", "steps.a.outputs.x is null, so it has no field y; write steps.a.outputs.x?.y to get null instead"},
		{"obj", "steps.a.outputs.a.b + 1", ""},
		{"obj", "steps.a.outputs?.x?.y ?? 'none'", ""},
		{"obj", "steps.a.outputs?.x.y.z ?? 'none'", "steps.a.outputs?.x is null, so it has no field y"},
		{"echo", "steps.a.outputs?.city", `steps.a.outputs is text ("hi"), not an object, so it has no field city`},
		{"obj", "steps.a.outputs.a?.b.c", "steps.a.outputs.a?.b is a number, not an object, so it has no field c"},
		{"obj", "map([steps.a.outputs], #.a.b)[0] + 1", ""},
		{"obj", "steps.a.outputs.nope", ""},
		{"obj", "steps.a.outputs['a'].b", ""},
		{"echo", "len(steps.a.outputs) + len(steps.a.outputs[0:2])", ""},
	} {
		p := mustLoad(t, "steps:\n  - {id: a, tool: "+tc.tool+", with: {message: hi}}\n  - id: b\n    tool: echo\n    with:\n      message: |-\n        ${{ "+tc.expr+" }}\n")
		res, err := (&Runner{}).Run(context.Background(), p, nil, caller, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, res)
		switch {
		case tc.want == "" && r.IsError:
			t.Errorf("%s: %s", tc.expr, r.text())
		case tc.want != "" && (!r.IsError || !strings.Contains(r.text(), tc.want)):
			t.Errorf("%s:\n got %s\nwant %s", tc.expr, r.text(), tc.want)
		}
	}
}
