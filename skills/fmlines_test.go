package skills

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFrontmatterValueLines: problems with a key's value point at the
// value's line, not the frontmatter's first one.
func TestFrontmatterValueLines(t *testing.T) {
	long := strings.Repeat("word ", 210)
	for _, c := range []struct {
		src   string
		field string
		line  int
	}{
		{"---\nlicense: MIT\nversion: 1\nname: \"bad name!\"\ndescription: d\n---\n", "name", 4},
		{"---\nlicense: MIT\nname: ok\n\ndescription: " + long + "\n---\n", "description", 5},
		{"---\nname: ok\ntags: [a]\ndescription: \"\"\n---\n", "description", 4},
	} {
		_, _, err := ParseFrontmatter([]byte(c.src))
		fe, ok := err.(*FrontmatterError)
		if !ok {
			t.Fatalf("%q: %v", c.src, err)
		}
		found := false
		for _, p := range fe.Problems {
			if p.Field == c.field {
				found = true
				if p.Line != c.line {
					t.Errorf("%s problem %q at line %d, want %d", c.field, p.Msg, p.Line, c.line)
				}
			}
		}
		if !found {
			t.Errorf("no %s problem in %v", c.field, fe.Problems)
		}
	}
}

// TestDuplicateIDRelative: the problem of a skill defined twice names
// the other SKILL.md as the others name theirs: relative to the working
// folder.
func TestDuplicateIDRelative(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a/x/SKILL.md": skillMD("x", "First."),
		"b/x/SKILL.md": skillMD("x", "Second."),
	})
	t.Chdir(dir)
	lib := openLib(t, Options{Dirs: []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, StateDir: t.TempDir()})
	var msgs []string
	for _, p := range lib.Snapshot().Problems() {
		msgs = append(msgs, p.String())
	}
	want := "b/x/SKILL.md:2: name: skill x is also defined in a/x/SKILL.md" // at the line of name:
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], want) {
		t.Errorf("problems %q, want one starting %q", msgs, want)
	}
}

// TestFrontmatterYAMLErrorLines: a YAML syntax error is reported at the
// line of the file that holds the mistake (line 1 is the opening ---),
// whichever of yaml.v3's marks (the construct's start or the place it
// gave up, counted from 0 or from 1) its message carries.
func TestFrontmatterYAMLErrorLines(t *testing.T) {
	for _, c := range []struct {
		what, src string
		line      int
	}{
		{"key indented too far", "---\nname: x\ndescription: d\n  bad: indent\n---\n", 4},
		{"key indented too little", "---\nname: x\ndescription: d\nmetadata:\n  a: 1\n b: 2\n---\n", 6},
		{"folded text dedented", "---\nname: x\ndescription: >\n  folded\n bad\n---\n", 5},
		{"unclosed double quote", "---\nname: x\ndescription: \"unclosed\nlicense: MIT\n---\n", 3},
		{"unclosed single quote", "---\nname: x\ndescription: d\nlicense: 'oops\n---\n", 4},
		{"tab indenting a key", "---\nname: x\ndescription: d\nlicense: MIT\n\ttags: [a]\n---\n", 5},
		{"tab on the second line", "---\nname: x\n\tdescription: d\n---\n", 3},
		{"unclosed list", "---\nname: x\ndescription: d\ntags: [a, b\nlicense: MIT\n---\n", 4},
		{"unclosed list on the first line", "---\nname: [a, b\ndescription: d\nlicense: MIT\n---\n", 2},
		{"unclosed mapping", "---\nname: x\ndescription: d\nfoo: {a: 1\n---\n", 4},
		{"extra bracket", "---\nname: x\ndescription: d\nfoo: [a, b]]\n---\n", 4},
		{"list item among keys", "---\nname: x\ndescription: d\n- item\n---\n", 4},
		{"colon in a value", "---\nname: x\ndescription: d: e\n---\n", 3},
		{"reserved character", "---\nname: x\ndescription: d\nfoo: @bar\n---\n", 4},
		{"unknown alias", "---\nname: x\ndescription: d\nfoo: *nope\n---\n", 4},
		{"bad escape after blank lines", "---\nname: x\ndescription: d\n\n\nfoo: \"a\\qb\"\n---\n", 6},
		{"mistake after a quoted text over two lines", "---\nname: x\ndescription: \"two\n  lines\"\nlicense: 'oops\n---\n", 5},
		{"mistake after a list over two lines", "---\nname: x\ntags: [a,\n  b]\nfoo: [c\ndescription: d\n---\n", 5},
		{"CRLF line ends", "---\r\nname: x\r\ndescription: d\r\n  bad: indent\r\n---\r\n", 4},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, _, err := ParseFrontmatter([]byte(c.src))
			fe, ok := err.(*FrontmatterError)
			if !ok || len(fe.Problems) != 1 {
				t.Fatalf("%q: %v", c.src, err)
			}
			p := fe.Problems[0]
			if !strings.Contains(p.Msg, "not valid YAML") || p.Line != c.line {
				t.Errorf("%q: %d: %s; want line %d", c.src, p.Line, p.Msg, c.line)
			}
		})
	}
}
