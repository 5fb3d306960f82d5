package pipelines

import (
	"strings"
	"testing"
)

// item has the type of for_each's items: the fields of a literal list's
// objects, or the items schema of the inputs list it reads, so a misspelt
// field is a load error at file:line with the nearest name, as for inputs.
// Fields that some items lack, and items of unknown type, still load.
func TestItemFields(t *testing.T) {
	const inputs = "inputs: {type: object, properties: {envs: {type: array, items: {type: object, properties: {name: {type: string}, url: {type: string}}}}}}\n"
	for _, tc := range []struct{ src, want string }{
		{"steps: [{id: a, tool: t, for_each: [{name: dev, n: 1}, {name: prod, n: 2}], with: {m: \"${{ item.nme }}\"}}]\n",
			"p.yaml:1:97: steps[0].with.m: unknown field nme; did you mean name? in ${{ item.nme }}"},
		{inputs + "steps:\n  - id: b\n    for_each: ${{ inputs.envs }}\n    tool: t\n    with: {m: \"${{ item.urll }}\"}\n",
			"p.yaml:6:25: steps[0].with.m: unknown field urll; did you mean url? in ${{ item.urll }}"},
		{"steps: [{id: a, tool: t, with: {m: \"${{ item.n + 'x' }}\"}, for_each: [{n: 1}]}]\n",
			"invalid operation"},
	} {
		_, err := (&Loader{}).Parse(strings.NewReader(tc.src), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got\n%v\nwant\n%s", tc.src, err, tc.want)
		}
	}
	for _, src := range []string{
		"steps: [{id: a, tool: t, for_each: [{name: dev}, {name: prod, url: u}], with: {m: \"${{ item.name }} ${{ item.url ?? '' }}\"}}]\n",
		inputs + "steps: [{id: a, tool: t, for_each: \"${{ inputs.envs }}\", with: {m: \"${{ item.name }} ${{ item.url }} ${{ index }}\"}}]\n",
		"steps: [{id: a, tool: t}, {id: b, tool: t, for_each: \"${{ steps.a.outputs }}\", with: {m: \"${{ item.anything }}\"}}]\n",
		"steps: [{id: a, tool: t, for_each: [1, x, {a: 1}], with: {m: \"${{ item }}\"}}]\n",
	} {
		if _, err := (&Loader{}).Parse(strings.NewReader(src), "p.yaml"); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// A pipeline without a description loads, with a warning at its start:
// clients choose tools by their descriptions (script tools must have one).
func TestDescriptionWarning(t *testing.T) {
	ps, err := (&Loader{}).Parse(strings.NewReader("name: bare\nsteps: [{id: a, tool: t}]\n---\nname: told\ndescription: Says hi.\nsteps: [{id: a, tool: t}]\n"), "p.yaml")
	if err != nil || len(ps) != 2 {
		t.Fatalf("load: %d pipelines, %v", len(ps), err)
	}
	var got []string
	for _, p := range ps {
		for _, w := range p.Warnings {
			got = append(got, w.Error())
		}
	}
	want := "p.yaml:1:1: warning: description: pipeline bare has no description; add description: with what it does and when to use it, which clients read to choose the tool"
	if len(got) != 1 || got[0] != want {
		t.Errorf("warnings %q\nwant [%q]", got, want)
	}
}
