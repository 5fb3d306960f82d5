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
	want := "b/x/SKILL.md: name: skill x is also defined in a/x/SKILL.md"
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], want) {
		t.Errorf("problems %q, want one starting %q", msgs, want)
	}
}
