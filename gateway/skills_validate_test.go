package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/skills"
)

// TestValidateSkillScripts: `skillgate validate` (ValidateSkills) warns
// about scripts that cannot run as they are (executable without a #!
// line or a known extension, a link leading out of the skill folder),
// puts a scripts: key naming no script at its line and column, and
// reports every problem of a skill whose frontmatter does not load
// (timeout: banana) at once: its name that differs from the folder and
// its scripts: key naming no script too.
func TestValidateSkillScripts(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/scripty/SKILL.md":            "---\nname: scripty\ndescription: Scripts.\nscripts:\n  ok.sh: Fine.\n  missing.py: {timeout: 1s}\n---\n",
		"skills/scripty/scripts/ok.sh":       "echo ok\n",
		"skills/scripty/scripts/withshebang": "#!/bin/sh\necho ok\n",
		"skills/scripty/scripts/noshebang":   "echo no\n",
		"skills/scripty/scripts/noexec":      "data\n",
		"skills/banana/SKILL.md":             "---\nname: bananas\ndescription: Broken.\nexecution: {timeout: banana}\nscripts:\n  gone.py: {timeout: 1s}\n---\n",
		"outside.sh":                         "echo out\n",
	})
	for _, f := range []string{"skills/scripty/scripts/withshebang", "skills/scripty/scripts/noshebang"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "outside.sh"), filepath.Join(dir, "skills/scripty/scripts/outside.sh")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cfg, err := config.Parse(strings.NewReader("skills: {dirs: [skills]}\n"), filepath.Join(dir, "skillgate.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	probs, err := gateway.ValidateSkills(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	find := func(path, field, text string) (skills.Problem, bool) {
		for _, p := range probs {
			if p.Path == path && p.Field == field && strings.Contains(p.Msg, text) {
				return p, true
			}
		}
		return skills.Problem{}, false
	}
	for _, c := range []struct {
		path, field, text string
		line, col         int
		warning           bool
	}{
		{"skills/scripty/SKILL.md", "scripts.missing.py", "no such script", 6, 3, false},
		{"skills/scripty/scripts/noshebang", "", "no #! line", 0, 0, true},
		{"skills/scripty/scripts/outside.sh", "", "outside the skill folder", 0, 0, true},
		{"skills/banana/SKILL.md", "execution.timeout", `"banana" is not a duration`, 4, 22, false},
		{"skills/banana/SKILL.md", "name", `differs from its folder`, 2, 1, true},
		{"skills/banana/SKILL.md", "scripts.gone.py", "no such script", 6, 3, false},
	} {
		p, ok := find(c.path, c.field, c.text)
		if !ok {
			var all []string
			for _, p := range probs {
				all = append(all, p.String())
			}
			t.Errorf("no problem %s %s %q in:\n%s", c.path, c.field, c.text, strings.Join(all, "\n"))
			continue
		}
		if p.Line != c.line || p.Column != c.col || p.Warning != c.warning {
			t.Errorf("%s: at %d:%d warning %v, want %d:%d warning %v", p, p.Line, p.Column, p.Warning, c.line, c.col, c.warning)
		}
		if c.path != "skills/scripty/SKILL.md" && c.field == "" && !strings.Contains(p.Msg, "instead") {
			t.Errorf("%s: says no what to do", p)
		}
	}
	for _, p := range probs {
		if strings.Contains(p.Path, "withshebang") || strings.Contains(p.Path, "noexec") || strings.Contains(p.Path, "ok.sh") {
			t.Errorf("a problem about a script that runs: %s", p)
		}
	}
}

// TestValidateSkillToolEnv: a skill's tool folder whose tool.yaml asks
// (env: or secrets:) for a variable the gateway does not pass to skills
// is not served; `skillgate validate` (ValidateSkills) and `skillgate
// skills validate` (CheckSkills) say so as an error at the variable's
// line of the tool.yaml, naming the variable and skills.env_allow. With
// the variable in skills.env_allow the tool is fine.
func TestValidateSkillToolEnv(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/api/SKILL.md":            "---\nname: api\ndescription: Calls the API.\n---\n# API\n",
		"skills/api/tools/get/tool.yaml": "name: get\ndescription: Get.\nruntime: bash\nentry: get.sh\nenv:\n  - HOME\n  - GITHUB_TOKEN\nsecrets: [SKILLGATE_API_KEY]\n",
		"skills/api/tools/get/get.sh":    "echo hi\n",
	})
	t.Chdir(dir)
	check := func(yml string) []skills.Problem {
		t.Helper()
		cfg, err := config.Parse(strings.NewReader(yml), filepath.Join(dir, "skillgate.yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		probs, err := gateway.ValidateSkills(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return probs
	}
	probs := check("skills: {dirs: [skills]}\n")
	tool := filepath.Join("skills", "api", "tools", "get", "tool.yaml")
	for _, c := range []struct {
		name, field string
		line, col   int
	}{{"GITHUB_TOKEN", "env[1]", 7, 5}, {"SKILLGATE_API_KEY", "secrets[0]", 8, 11}} {
		var found bool
		for _, p := range probs {
			if p.Path != tool || !strings.Contains(p.Msg, c.name) {
				continue
			}
			found = true
			if p.Warning || p.Line != c.line || p.Column != c.col || p.Field != c.field || !strings.Contains(p.Msg, "skills.env_allow") || !strings.Contains(p.Msg, "not served") {
				t.Errorf("%s: want an error at %d:%d, field %s, saying the tool is not served and naming skills.env_allow", p, c.line, c.col, c.field)
			}
		}
		if !found {
			t.Errorf("no problem about %s at %s in:\n%v", c.name, tool, probs)
		}
	}
	for _, p := range probs {
		if strings.Contains(p.Msg, "HOME") && !strings.Contains(p.Msg, "TOKEN") && !strings.Contains(p.Msg, "API_KEY") {
			t.Errorf("a problem about HOME, which skills get: %s", p)
		}
	}
	for _, p := range check("skills: {dirs: [skills], env_allow: [GITHUB_TOKEN, SKILLGATE_API_*]}\n") {
		if p.Path == tool {
			t.Errorf("a problem with both variables in skills.env_allow: %s", p)
		}
	}
}
