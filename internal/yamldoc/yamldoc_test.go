package yamldoc

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The config, pipelines and tool.yaml loaders test Syntax on their own
// files; here are the cases they cannot reach.

// Past maxLocate the line yaml.v3 printed is kept, made 1-based.
func TestSyntaxLargeFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("servers:\n  a:\n    command: echo\n   args: [x]\n")
	for b.Len() <= maxLocate {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	data := []byte(b.String())
	var n yaml.Node
	err := yaml.Unmarshal(data, &n)
	if err == nil {
		t.Fatal("no error")
	}
	if got, want := Syntax(err, data), (Problem{Line: 2, Msg: "did not find expected key"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Problem
		bad  bool
	}{
		{"a: café\n", Problem{}, false},
		{"a: 1\nb: caf\xe9\n", Problem{Line: 2, Col: 7, Msg: "byte 0xe9 is not UTF-8; the file must be UTF-8 text: save it as UTF-8, or fix the characters here"}, true},
		{"\xff\xfea\x00", Problem{}, false}, // UTF-16, which yaml.v3 reads
	} {
		got, bad := UTF8([]byte(tc.in))
		if got != tc.want || bad != tc.bad {
			t.Errorf("UTF8(%q) = %+v, %v; want %+v, %v", tc.in, got, bad, tc.want, tc.bad)
		}
	}
}

func TestAliases(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, name := range []string{"b", "c", "d", "e"} {
		prev := string(rune('a' + i))
		bomb += fmt.Sprintf("%s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", "))
	}
	many := "list: &l [" + strings.Repeat("x, ", MaxAliasValues/2) + "x]\n"
	tests := []struct {
		name, in string
		want     []string // "line:col field: msg"
	}{
		{"no aliases, however many values", "a: [" + strings.Repeat("x, ", 2*MaxAliasValues) + "x]\n", nil},
		{"aliases within the budget", many + "b: *l\n", nil},
		{"aliases past the budget", many + "b: *l\nc: {d: *l}\n",
			[]string{"3:8 c.d: aliases expand to more than 100000 values here; use fewer aliases, or alias smaller parts"}},
		{"aliases inside aliased values count", bomb,
			[]string{"5:36 e[7]: aliases expand to more than 100000 values here; use fewer aliases, or alias smaller parts"}},
		{"a list in itself", "a: &a [x, *a]\n", []string{"1:11 a[1]: alias *a refers to itself"}},
		{"a merge of itself", "x: &x\n  k: v\n  <<: *x\ny: {<<: *x}\n", []string{"3:7 x: alias *x refers to itself"}},
		{"a merge list of itself", "a: {<<: &m [*m]}\n", []string{"1:13 a: alias *m refers to itself"}},
		{"merges add no field", "b: &b {k: v}\nc: &c {<<: [*b, *b]}\nd:\n  e: {<<: [*c], k: &k [*k]}\n",
			[]string{"4:24 d.e.k[0]: alias *k refers to itself"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.in), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range Aliases(&doc) {
				got = append(got, fmt.Sprintf("%d:%d %s: %s", p.Line, p.Col, p.Field, p.Msg))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
