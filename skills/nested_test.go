package skills

import (
	"strings"
	"testing"
)

// TestNestedSkillsWarned: each SKILL.md the scan does not serve gets a
// warning saying why: one too deep, one inside another skill's folder,
// and one under a "team" folder that is a (broken) skill itself.
func TestNestedSkillsWarned(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"org/platform/deploy/SKILL.md": skillMD("deploy", "Deploys."),
		"outer/SKILL.md":               skillMD("outer", "Outer."),
		"outer/inner/SKILL.md":         skillMD("inner", "Inner."),
		"team-c/SKILL.md":              "---\nname: [broken\n---\n",
		"team-c/sub/SKILL.md":          skillMD("sub", "Sub."),
		"team-d/ok/SKILL.md":           skillMD("ok", "Fine."),
		"team-d/ok/refs/x/SKILL.md":    skillMD("x", "In ok's folder."),
	})
	lib := openLib(t, Options{Dirs: []string{dir}, StateDir: t.TempDir()})
	got := map[string]string{}
	for _, p := range lib.Snapshot().Problems() {
		if p.Warning && strings.HasPrefix(p.Msg, "not served") {
			got[p.Path[len(dir)+1:]] = p.Msg
		}
	}
	for file, want := range map[string]string{
		"org/platform/deploy/SKILL.md": "at most two levels down",
		"outer/inner/SKILL.md":         "inside the folder of the skill",
		"team-c/sub/SKILL.md":          "inside the folder of the skill",
		"team-d/ok/refs/x/SKILL.md":    "inside the folder of the skill",
	} {
		if !strings.Contains(got[file], want) {
			t.Errorf("%s: warning %q, want one saying %q (all: %v)", file, got[file], want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("warnings: %v", got)
	}
}
