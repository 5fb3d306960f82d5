package config

import (
	"fmt"
	"slices"
	"strings"
)

// Values of Skills.Sandbox.
const (
	// SandboxOptional runs skills' scripts as their SKILL.md says.
	SandboxOptional = "optional"
	// SandboxRequired runs every skill's scripts under the sandbox (or,
	// on an entry of skills.repos, its repository's).
	SandboxRequired = "required"
	// SandboxRepos runs the scripts of git repositories' skills under the
	// sandbox.
	SandboxRepos = "repos"
)

// skillsRules checks skills.env_allow and skills.sandbox.
func (v *validator) skillsRules() {
	s := &v.c.Skills
	for i, n := range s.EnvAllow {
		if name, _ := strings.CutSuffix(n, "*"); !validVarName(name) && !(name == "" && n == "*") {
			v.errorf(fmt.Sprintf("skills.env_allow[%d]", i), "%q is not a variable name nor a prefix ending in *; write NAME or PREFIX_*", n)
		}
	}
	if !slices.Contains([]string{"", SandboxOptional, SandboxRepos, SandboxRequired}, s.Sandbox) {
		v.errorf("skills.sandbox", "unknown value %q; use required (every skill's scripts, hooks and tools run under the sandbox), "+
			"repos (those of git repositories' skills) or optional (the default: as SKILL.md says)", s.Sandbox)
	}
	for i, r := range s.Repos {
		if r != nil && !slices.Contains([]string{"", SandboxOptional, SandboxRequired}, r.Sandbox) {
			v.errorf(fmt.Sprintf("skills.repos[%d].sandbox", i), "unknown value %q; use required (this repository's skills run under the sandbox) or optional (the default: as skills.sandbox says)", r.Sandbox)
		}
	}
}
