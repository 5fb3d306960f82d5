package skills

import (
	"strings"
	"testing"
)

// TestFrontmatterYAMLHints: the YAML errors people make most in a
// SKILL.md say what to do: a value holding ": " is to be quoted (YAML
// reads it as a mapping), and a tab indent is to be spaces.
func TestFrontmatterYAMLHints(t *testing.T) {
	for _, c := range []struct {
		what, src string
		line      int
		want      []string
	}{
		{"colon in the description", "---\nname: x\ndescription: Use this: when the user asks\n---\n", 3,
			[]string{"mapping values are not allowed", `put the value of description in quotes: description: "Use this: when the user asks"`}},
		{"colon on the first line", "---\ndescription: d: e\nname: x\n---\n", 2,
			[]string{`description: "d: e"`}},
		{"colon in a value holding a quote", "---\nname: x\ndescription: Say \"hi\": then go\n---\n", 3,
			[]string{`description: 'Say "hi": then go'`}},
		{"tab indenting a nested key", "---\nname: tabs\ndescription: tab below\nmetadata:\n\tversion: 1\n---\n", 5,
			[]string{"line 5 is indented with a tab", "YAML needs spaces", "indent with spaces"}},
		{"tab before a key", "---\nname: x\n\tdescription: d\n---\n", 3,
			[]string{"indented with a tab", "YAML needs spaces"}},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, _, err := ParseFrontmatter([]byte(c.src))
			fe, ok := err.(*FrontmatterError)
			if !ok || len(fe.Problems) != 1 {
				t.Fatalf("%q: %v", c.src, err)
			}
			p := fe.Problems[0]
			if p.Line != c.line {
				t.Errorf("line %d, want %d: %s", p.Line, c.line, p.Msg)
			}
			for _, w := range c.want {
				if !strings.Contains(p.Msg, w) {
					t.Errorf("%s\nwant %q in it", p.Msg, w)
				}
			}
		})
	}
}
