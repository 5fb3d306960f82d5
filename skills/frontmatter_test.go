package skills

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFrontmatter(t *testing.T) {
	src := "---\n" +
		"name: pdf-forms\n" +
		"description: >\n  Fill PDF forms\n  and check them.\n" +
		"license: Apache-2.0\n" +
		"allowed-tools: Bash, Read\n" +
		"metadata:\n  version: \"2.1\"\n  tags: [pdf, forms]\n" +
		"requires:\n  skills: [pdf-basics]\n  servers: [filesystem]\n  services: [postgres]\n  tools: [\"github__*\"]\n" +
		"execution: {timeout: 30s, stall_timeout: 10}\n" +
		"scripts:\n  fill.py: {timeout: 2m, description: Fill a form}\n  scripts/check.sh: Check a form\n" +
		"x-custom: {a: 1}\n" +
		"---\n# PDF forms\nbody\n"
	m, off, err := ParseFrontmatter([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := src[off:]; got != "# PDF forms\nbody\n" {
		t.Errorf("body = %q", got)
	}
	want := Meta{
		Name: "pdf-forms", Description: "Fill PDF forms and check them.", License: "Apache-2.0",
		AllowedTools: []string{"Bash", "Read"}, Version: "2.1", Tags: []string{"pdf", "forms"},
		Requires:  Requires{Skills: []string{"pdf-basics"}, Servers: []string{"filesystem"}, Services: []string{"postgres"}, Tools: []string{"github__*"}},
		Execution: Policy{Timeout: 30 * time.Second, StallTimeout: 10 * time.Second},
		Scripts: map[string]Policy{
			"fill.py":  {Timeout: 2 * time.Minute, Description: "Fill a form"},
			"check.sh": {Description: "Check a form"},
		},
	}
	raw := m.Raw
	if l, c := m.Pos("scripts.check.sh"); l != 19 || c != 3 {
		t.Errorf("Pos(scripts.check.sh) = %d:%d, want 19:3", l, c)
	}
	m.Raw, m.pos = nil, nil
	if !reflect.DeepEqual(m, want) {
		t.Errorf("meta =\n%+v\nwant\n%+v", m, want)
	}
	if raw["x-custom"].(map[string]any)["a"] != 1 || raw["name"] != "pdf-forms" {
		t.Errorf("raw = %v", raw)
	}
}

func TestParseFrontmatterProblems(t *testing.T) {
	cases := []struct {
		name, src, want string
		line            int
	}{
		{"no frontmatter", "# Title\n", "must start with a line \"---\"", 1},
		{"not closed", "---\nname: a\n", "not closed", 1},
		{"not yaml", "---\nname: [a\n---\n", "not valid YAML", 2},
		{"missing name", "---\ndescription: d\n---\n", "name: missing", 2},
		{"missing description", "---\nname: a\n---\n", "description: missing", 2},
		{"bad name", "---\nname: ../x\ndescription: d\n---\n", "is not a skill name: 1 to 64 characters of ASCII letters", 2},
		{"bad tags", "---\nname: a\ndescription: d\ntags: {a: b}\n---\n", "tags: want a list", 4},
		{"bad duration", "---\nname: a\ndescription: d\nexecution: {timeout: soon}\n---\n", "\"soon\" is not a duration", 4},
		{"unknown requires", "---\nname: a\ndescription: d\nrequires: {skill: [x]}\n---\n", "requires.skill: unknown", 4},
		{"script path", "---\nname: a\ndescription: d\nscripts: {../x.py: {timeout: 1s}}\n---\n", "climbs out", 4},
		{"duplicate key", "---\nname: a\nname: b\ndescription: d\n---\n", "", 0},
		{"list", "---\n- a\n---\n", "must be a mapping", 2},
		{"empty", "---\n---\n", "empty", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseFrontmatter([]byte(c.src))
			var fe *FrontmatterError
			if !errors.As(err, &fe) || !hasErrors(err) {
				t.Fatalf("err = %v, want a FrontmatterError", err)
			}
			if c.want == "" {
				return
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
			if fe.Problems[0].Line != c.line {
				t.Errorf("line = %d, want %d (%v)", fe.Problems[0].Line, c.line, err)
			}
		})
	}
}

func TestParseFrontmatterLimits(t *testing.T) {
	long := "---\nname: a\ndescription: d\nnote: |\n" + strings.Repeat("  filler line of text\n", 1000) + "---\nbody"
	if _, _, err := ParseFrontmatter([]byte(long)); err == nil || !strings.Contains(err.Error(), "16 KB") {
		t.Errorf("err = %v, want the 16 KB limit", err)
	}
	// CRLF, a BOM and a frontmatter ending the file are fine.
	m, off, err := ParseFrontmatter([]byte("\xef\xbb\xbf---\r\nname: a\r\ndescription: d\r\n---"))
	if err != nil || m.Name != "a" || m.Description != "d" || off != 36 {
		t.Errorf("meta %+v off %d err %v", m, off, err)
	}
	// A long description is a warning, not an error.
	_, _, err = ParseFrontmatter([]byte("---\nname: a\ndescription: " + strings.Repeat("x", 1100) + "\n---\n"))
	if err == nil || hasErrors(err) {
		t.Errorf("err = %v, want a warning only", err)
	}
}

func FuzzParseFrontmatter(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody"))
	f.Add([]byte("---\nname: a\ndescription: d\ntags: [x]\nrequires: {skills: [b]}\nscripts: {a.py: {timeout: 1s}}\n---\n"))
	f.Add([]byte("---\r\n---\r\n"))
	f.Add([]byte("---\nname: &a [*a]\n---\n"))
	f.Add([]byte("\xef\xbb\xbf---\n..."))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, off, err := ParseFrontmatter(src)
		if off < 0 || off > len(src) {
			t.Fatalf("offset %d out of range", off)
		}
		if !hasErrors(err) {
			if !nameRE().MatchString(m.Name) || m.Description == "" {
				t.Fatalf("accepted meta %+v", m)
			}
			for p := range m.Scripts {
				if relProblem(p) != "" {
					t.Fatalf("accepted script path %q", p)
				}
			}
		}
	})
}
