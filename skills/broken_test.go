package skills

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBrokenSkillSaysWhy: a skill an edit broke is not served, and
// run_skill_script (like load_skill) says why, at file:line, rather than
// calling it unknown.
func TestBrokenSkillSaysWhy(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"git-helper/SKILL.md":      skillMD("git-helper", "Helps with git."),
		"git-helper/scripts/st.sh": "echo ok\n",
	})
	lib := openLib(t, Options{Dirs: []string{dir}, StateDir: t.TempDir()})
	srv := NewServer(lib)
	md := filepath.Join(dir, "git-helper", "SKILL.md")
	if err := os.WriteFile(md, []byte("---\nname: git-helper\ndescription: [unclosed\n---\n# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, md)
	if _, err := lib.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{ToolRun, ToolLoad} {
		raw, err := srv.CallTool(context.Background(), tool, json.RawMessage(`{"skill":"git-helper","script":"st.sh"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		text := decode(t, raw).text()
		if !strings.Contains(text, "not served") || !regexp.MustCompile(`git-helper/SKILL.md:\d+: frontmatter`).MatchString(text) {
			t.Errorf("%s: %s", tool, text)
		}
	}
}
