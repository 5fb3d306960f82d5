package pipelines

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/yamldoc"

	"gopkg.in/yaml.v3"
)

// YAML problems in a pipeline file are reported where they are, as in
// skillgate.yaml, and aliases are bounded by what they bring, not by the
// size of the file.
func TestYAMLProblems(t *testing.T) {
	step := "description: d\nsteps:\n  - id: a\n    tool: x__y\n    with:\n"
	bomb := step + "      a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for _, name := range []string{"b", "c", "d", "e"} {
		prev := "*" + string(rune(name[0]-1))
		bomb += fmt.Sprintf("      %s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat(prev+", ", 10), ", "))
	}
	tests := []struct{ name, in, want string }{
		{"key indented too little", step + "      msg: hi\n     other: 2\n",
			"p.yaml:7:6: invalid YAML: did not find expected key; this line does not line up with the keys above it"},
		{"unclosed [", step + "      list: [1, 2\n      other: 2\n",
			"p.yaml:6:13: invalid YAML: did not find expected ',' or ']'; this [ is not closed"},
		{"${{ }} in { }", step + "      msg: hi\n    if: {a: ${{ inputs.x }}}\n",
			`p.yaml:7:9: invalid YAML: did not find expected ',' or '}'; a value holding ${{ }} inside { } or [ ] must be quoted: write "${{ ... }}"`},
		{"in the second document", step + "      msg: hi\n---\n" + step + "      msg: [\n",
			"p.yaml:13:12: invalid YAML: did not find expected node content; this [ is not closed"},
		{"not UTF-8", "description: caf\xe9\nsteps: [{id: a, tool: x__y}]\n",
			"p.yaml:1:17: byte 0xe9 is not UTF-8; the file must be UTF-8 text"},
		{"a long list", step + "      list: [" + strings.Repeat("1, ", yamldoc.MaxAliasValues) + "1]\n", ""},
		{"an alias loop", step + "      list: &l [1, *l]\n", "p.yaml:6:20: steps[0].with.list[1]: alias *l refers to itself"},
		{"an alias bomb", bomb, "p.yaml:10:42: steps[0].with.e[7]: aliases expand to more than 100000 values here; use fewer aliases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&Loader{}).Parse(strings.NewReader(tc.in), "p.yaml")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("got  %v\nwant %s...", err, tc.want)
			}
		})
	}
}

// ParseNode checks the aliases of the node it is given, which may come
// from another file than a pipeline's.
func TestParseNodeAliases(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("hello:\n  steps: &s [{id: a, tool: x__y, with: {again: *s}}]\n"), &doc); err != nil {
		t.Fatal(err)
	}
	_, err := (&Loader{}).ParseNode(doc.Content[0], "skillgate.yaml")
	if want := "skillgate.yaml:2:48: hello.steps[0].with.again: alias *s refers to itself"; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
