package skills

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStateDirNames: a skill's state folder is named collision-free
// (col/a/b/s1 and col/a_b/s1 do not share one), a git skill's is the same
// across commits of its repository, and a folder of the old naming (the
// path with every / written _) is moved to the new name on first use.
func TestStateDirNames(t *testing.T) {
	base := t.TempDir()
	l := New(Options{StateDir: base})
	if a, b := l.stateDir("/col/a/b/s1"), l.stateDir("/col/a_b/s1"); a == b {
		t.Errorf("col/a/b/s1 and col/a_b/s1 share the state folder %s", a)
	}

	l.roots = []root{{dir: "/repos/team/1111/skills", source: "git https://example.com/team.git@1111"}}
	before := l.stateDir("/repos/team/1111/skills/s1")
	l.roots = []root{{dir: "/repos/team/2222/skills", source: "git https://example.com/team.git@2222"}}
	if after := l.stateDir("/repos/team/2222/skills/s1"); after != before {
		t.Errorf("a git skill's state folder changed with the commit: %s, then %s", before, after)
	}
	if other := l.stateDir("/repos/team/2222/skills/s2"); other == before {
		t.Errorf("two skills of a repository share %s", other)
	}

	dir := "/srv/skills/kept"
	old := filepath.Join(base, "srv_skills_kept")
	if err := os.MkdirAll(filepath.Join(old, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "state", "counter"), []byte("7"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := l.stateDir(dir)
	if got, err := os.ReadFile(filepath.Join(now, "state", "counter")); err != nil || string(got) != "7" {
		t.Errorf("the old state folder was not moved to %s: %q %v", now, got, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the old state folder %s is still there: %v", old, err)
	}
}
