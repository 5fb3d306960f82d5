package config

import (
	"slices"
	"strings"
	"testing"
)

// TestSkillsRules: skills.env_allow takes names and prefixes ending in *,
// skills.sandbox required or optional; anything else is an error at its
// line.
func TestSkillsRules(t *testing.T) {
	c, err := Parse(strings.NewReader("skills:\n  dirs: [x]\n  env_allow: [GITHUB_TOKEN, \"AWS_*\"]\n  sandbox: repos\n  repos:\n    - {url: https://example.com/a.git, sandbox: required}\n"), "ok.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Skills.EnvAllow, []string{"GITHUB_TOKEN", "AWS_*"}) || c.Skills.Sandbox != SandboxRepos || c.Skills.Repos[0].Sandbox != SandboxRequired {
		t.Errorf("skills = %+v", c.Skills)
	}
	_, err = Parse(strings.NewReader("skills:\n  dirs: [x]\n  env_allow: [\"bad-name\", \"A*B\"]\n  sandbox: always\n  repos:\n    - {url: https://example.com/a.git, sandbox: repos}\n"), "bad.yaml", nil)
	for _, want := range []string{"bad.yaml:3", `skills.env_allow[0]: "bad-name"`, `skills.env_allow[1]: "A*B"`, "bad.yaml:4", `skills.sandbox: unknown value "always"`,
		"bad.yaml:6", `skills.repos[0].sandbox: unknown value "repos"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
