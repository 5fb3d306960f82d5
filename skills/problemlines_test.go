package skills

import (
	"testing"
)

// TestSkillProblemLines: a served skill's problem about a frontmatter
// key (a name that differs from the folder) carries the key's line and
// column.
func TestSkillProblemLines(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"mismatch/SKILL.md": "---\ndescription: d\nlicense: MIT\nname: other-name\n---\nbody\n",
	})
	lib := openLib(t, Options{Dirs: []string{dir}})
	var found bool
	for _, p := range lib.Snapshot().Problems() {
		if p.Field == "name" {
			found = true
			if p.Line != 4 || p.Column != 1 {
				t.Errorf("%s: at %d:%d, want 4:1", p, p.Line, p.Column)
			}
		}
	}
	sk, err := lib.Lookup("other-name")
	if err != nil || !found {
		t.Fatalf("no name problem (%v)", err)
	}
	for _, p := range sk.Problems {
		if p.Field == "name" && p.Line != 4 {
			t.Errorf("the skill's own problem %s lacks line 4", p)
		}
	}
}
