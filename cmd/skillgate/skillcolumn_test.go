package main

import (
	"testing"

	"github.com/skillgate/skillgate/skills"
)

// TestSkillProblemColumn: a skill problem's column reaches the
// validators' --json problems, as `skills validate --help` promises.
func TestSkillProblemColumn(t *testing.T) {
	got := skillProblemOf(skills.Problem{Path: "s/SKILL.md", Line: 4, Column: 22, Field: "execution.timeout", Msg: "m"}, "skill")
	if got.Line != 4 || got.Column != 22 {
		t.Errorf("validate problem %+v, want line 4 column 22", got)
	}
}
