package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillsRunStateDir: `skillgate skills run` gives a script the state
// folder the gateway gives it (SKILLGATE_STATE_DIR under
// $XDG_STATE_HOME/skillgate/skills), not one under the cache.
func TestSkillsRunStateDir(t *testing.T) {
	state, cache := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := t.TempDir()
	for p, c := range map[string]string{
		"stateful/SKILL.md":         "---\nname: stateful\ndescription: Keeps state.\n---\n# stateful\n",
		"stateful/scripts/where.sh": "echo \"state=$SKILLGATE_STATE_DIR\"\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, err := runCLI(t, "skills", "run", "--dir", dir, "stateful", "where.sh")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, errOut)
	}
	want := "state=" + filepath.Join(state, "skillgate", "skills") + string(filepath.Separator)
	if !strings.Contains(out, want) {
		t.Errorf("skills run: %s\nwant SKILLGATE_STATE_DIR under %s", out, want)
	}
}
