package skills

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrokenSkillHoldsItsName: two skills dirs define text-stats; the
// first one's is served. When an edit breaks it, the name stays bound to
// it (load_skill says what is broken and where) instead of the second
// dir's text-stats silently taking its place; once fixed, it is served
// again.
func TestBrokenSkillHoldsItsName(t *testing.T) {
	good, bad := t.TempDir(), t.TempDir()
	writeTree(t, good, map[string]string{"text-stats/SKILL.md": skillMD("text-stats", "The good one.")})
	writeTree(t, bad, map[string]string{"text-stats/SKILL.md": skillMD("text-stats", "The other one.")})
	lib := openLib(t, Options{Dirs: []string{good, bad}})
	srv := NewServer(lib)
	load := func() string {
		t.Helper()
		raw, err := srv.CallTool(context.Background(), ToolLoad, json.RawMessage(`{"skill":"text-stats"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, raw).text()
	}
	if got := load(); !strings.Contains(got, "Use it well") {
		t.Fatalf("load_skill: %q", got)
	}
	md := filepath.Join(good, "text-stats", "SKILL.md")
	fixed, _ := os.ReadFile(md)
	if err := os.WriteFile(md, []byte("---\nname: text-stats\ndescription: [unclosed\n---\n# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, md)
	if _, err := lib.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := load()
	if !strings.Contains(got, "not served") || !strings.Contains(got, filepath.Join(good, "text-stats", "SKILL.md")) {
		t.Errorf("load_skill of the broken skill: %q, want its own error", got)
	}
	var held bool
	for _, p := range lib.Snapshot().Problems() {
		if strings.Contains(p.Path, bad) && strings.Contains(p.Msg, "broken") {
			held = true
		}
	}
	if !held {
		t.Errorf("no problem says the other text-stats is not served while the first is broken: %v", lib.Snapshot().Problems())
	}
	if err := os.WriteFile(md, fixed, 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, md)
	if _, err := lib.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sk, err := lib.Lookup("text-stats"); err != nil || sk.Root != good {
		t.Errorf("after the fix: %v %v, want the first dir's skill", sk, err)
	}
}

// TestBrokenSkillHeldNameNotFolder: a broken skill whose frontmatter
// name (text-stats) differs from its folder (stats) holds that name, and
// load_skill answers both the name and the folder with the skill's own
// error, not "unknown skill" nor the problem of another dir's text-stats
// held back: for a frontmatter that parses with a bad value (its name
// read from it), and for one broken by a later edit that no longer
// parses (its name the one it was served under).
func TestBrokenSkillHeldNameNotFolder(t *testing.T) {
	for _, other := range []bool{false, true} {
		first := t.TempDir()
		md := filepath.Join(first, "stats", "SKILL.md")
		writeTree(t, first, map[string]string{"stats/SKILL.md": skillMD("text-stats", "Broken.", "execution: {timeout: banana}\n")})
		dirs := []string{first}
		if other {
			second := t.TempDir()
			writeTree(t, second, map[string]string{"text-stats/SKILL.md": skillMD("text-stats", "The other one.")})
			dirs = append(dirs, second)
		}
		lib := openLib(t, Options{Dirs: dirs})
		srv := NewServer(lib)
		load := func(name string) string {
			t.Helper()
			raw, err := srv.CallTool(context.Background(), ToolLoad, json.RawMessage(`{"skill":"`+name+`"}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			return decode(t, raw).text()
		}
		check := func(when, wantProblem string) {
			t.Helper()
			for _, name := range []string{"text-stats", "stats"} {
				got := load(name)
				if !strings.Contains(got, "is not served: "+md+":") || !strings.Contains(got, wantProblem) || strings.Contains(got, "Use it well") {
					t.Errorf("%s (another text-stats: %v): load_skill %s: %q, want the broken skill's own error (%s at %s)", when, other, name, got, wantProblem, md)
				}
			}
		}
		check("a bad value", "banana")

		if err := os.WriteFile(md, []byte(skillMD("text-stats", "Fixed.")), 0o644); err != nil {
			t.Fatal(err)
		}
		touch(t, md)
		if _, err := lib.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if sk, err := lib.Lookup("text-stats"); err != nil || sk.Root != first {
			t.Fatalf("after the fix: %v %v, want the first dir's skill", sk, err)
		}
		if err := os.WriteFile(md, []byte("---\nname: text-stats\ndescription: [unclosed\n---\n# x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		touch(t, md)
		if _, err := lib.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		check("a YAML error after an edit", "")
	}
}
