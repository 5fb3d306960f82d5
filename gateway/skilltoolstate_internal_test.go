package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills"
)

// TestSkillToolStateDirs: the state folders of skills' tool folders do
// not collide for the team skill team/x and the skill team_x (whose
// namespaces are both team_x), and the state a tool kept under the old
// name (skills/tools/<ID with / written _>/<folder>) is moved to the new
// one when its source is made, so none is lost.
func TestSkillToolStateDirs(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := t.TempDir()
	tool := "name: %s\ndescription: Keeps state.\nruntime: bash\nentry: t.sh\n"
	for p, c := range map[string]string{
		"team/x/SKILL.md":          "---\nname: x\ndescription: Team x.\n---\n# x\n",
		"team/x/tools/t/tool.yaml": strings.Replace(tool, "%s", "a", 1),
		"team/x/tools/t/t.sh":      "echo a\n",
		"team_x/SKILL.md":          "---\nname: team_x\ndescription: Team_x.\n---\n# team_x\n",
		"team_x/tools/t/tool.yaml": strings.Replace(tool, "%s", "b", 1),
		"team_x/tools/t/t.sh":      "echo b\n",
		"solo/SKILL.md":            "---\nname: solo\ndescription: Solo.\n---\n# solo\n",
		"solo/tools/t/tool.yaml":   strings.Replace(tool, "%s", "c", 1),
		"solo/tools/t/t.sh":        "echo c\n",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(state, "skillgate", "skills", "tools", "solo", "t")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "state.json"), []byte(`{"n":7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Skills.Dirs = []string{dir}
	opts := SkillsOptions(cfg)
	opts.NoWatch, opts.Interval = true, -1
	lib, err := skills.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	g := &Gateway{cfg: cfg}
	stateOf := func(id string) string {
		t.Helper()
		sk, err := lib.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		s, err := g.skillToolSource(cfg, lib, sk, sk.ToolDirs[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := toolspec.ParseSpec(s.spec)
		if err != nil {
			t.Fatal(err)
		}
		return spec.StateDir
	}
	if a, b := stateOf("team/x"), stateOf("team_x"); a == b {
		t.Errorf("team/x and team_x share the state folder %s", a)
	}
	now := stateOf("solo")
	if got, err := os.ReadFile(filepath.Join(now, "state.json")); err != nil || string(got) != `{"n":7}` {
		t.Errorf("the old state folder %s was not moved to %s: %q %v", old, now, got, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) && now != old {
		t.Errorf("the old state folder %s is still there: %v", old, err)
	}
}
