package skills

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestScriptsOutsideScriptsDir: files run_skill_script runs outside
// scripts/ (Anthropic's docx skill keeps ooxml/scripts/unpack.py) are
// the skill's scripts: in Skill.Scripts (what `skills show` prints) and
// under "scripts (run_skill_script)" in load_skill's footer, not under
// its files. Hooks, tool folders and plain files stay out.
func TestScriptsOutsideScriptsDir(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"docx/SKILL.md":                skillMD("docx", "Word files."),
		"docx/ooxml/scripts/unpack.py": "print(1)\n",
		"docx/ooxml/schema.xsd":        "<x/>\n",
		"docx/tool":                    "+x#!/bin/sh\necho hi\n",
		"docx/scripts/pack.sh":         "echo pack\n",
		"docx/hooks/pre.sh":            "+x#!/bin/sh\n",
		"docx/tools/t/tool.yaml":       "name: t\nruntime: bash\nentry: t.sh\n",
		"docx/tools/t/t.sh":            "echo t\n",
		"docx/references/guide.md":     "# Guide\n",
	})
	srv := NewServer(openLib(t, Options{Dirs: []string{dir}}))
	sk, err := srv.lib.Lookup("docx")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pack.sh", "ooxml/scripts/unpack.py", "tool"}; !slices.Equal(sk.Scripts, want) {
		t.Errorf("Scripts = %q, want %q", sk.Scripts, want)
	}
	out := string(srv.load(context.Background(), "docx", ""))
	if !strings.Contains(out, "scripts (run_skill_script): pack.sh; ooxml/scripts/unpack.py; tool;") {
		t.Errorf("load_skill's footer does not list ooxml/scripts/unpack.py and tool as scripts:\n%s", out)
	}
	if !strings.Contains(out, `files (read_skill_file): ooxml/schema.xsd, references/guide.md, tools/t/t.sh, tools/t/tool.yaml\nactivate`) {
		t.Errorf("load_skill's footer does not list the other files alone:\n%s", out)
	}
}
