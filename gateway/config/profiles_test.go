package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/skills"
)

// TestProfileSkillsWithoutTools: a profile that names skills is given
// the skills tools, so only one whose allow: or deny: removes them all
// gets a warning.
func TestProfileSkillsWithoutTools(t *testing.T) {
	const file = `skills: {dirs: [skills]}
profiles:
  bare:
    skills: [csv-insights]
  allowed:
    skills: [csv-insights]
    allow: ["github__*"]
  denied:
    skills: [csv-insights]
    tools: ["*"]
    deny: ["*skill*"]
  ok:
    skills: [csv-insights]
    tools: [find_skills, load_skill]
  none:
    tools: ["*"]
`
	cfg, err := Parse(strings.NewReader(file), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings() {
		if strings.HasPrefix(w.Field, "profiles.") { // not the skills dir, which is not there
			got = append(got, w.Error())
		}
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "f.yaml:6:13: profiles.allowed.skills: profile allowed names skills, but its allow:/deny: remove every skills tool (find_skills, load_skill, read_skill_file, run_skill_script)") ||
		!strings.Contains(got[1], "profile denied names skills") {
		t.Errorf("warnings:\n%s\nwant one for allowed and one for denied", strings.Join(got, "\n"))
	}
	if want := []string{skills.ToolFind, skills.ToolLoad, skills.ToolReadFile, skills.ToolRun}; !slices.Equal(SkillsTools, want) {
		t.Errorf("SkillsTools = %v, want the skills package's %v", SkillsTools, want)
	}
}

// TestProfileSkillsWithoutSkills: a profile naming a skill in a config
// that serves no skills is an error at its line.
func TestProfileSkillsWithoutSkills(t *testing.T) {
	_, err := Parse(strings.NewReader("profiles:\n  p: {skills: [no-such-skill]}\n"), "f.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `f.yaml:2:16: profiles.p.skills[0]: no skill "no-such-skill": the config serves no skills`) {
		t.Errorf("Parse = %v, want an error at the skill", err)
	}
}

// TestUnmatched: pinned:, bundle include: and profile tools:, allow: and
// pinned: entries that match nothing served are told, one warning each
// at file:line; entries that match are not.
func TestUnmatched(t *testing.T) {
	const file = `servers:
  github: {command: node}
pinned: [github__*, githb__*]
bundles:
  ops:
    include: [github, server:github, skill:csv, tool:github__search, nosuch, "gh__*"]
profiles:
  p:
    tools: [github__search, "nothing__*"]
    allow: ["*search*", "*zzz*"]
    deny: ["never__*"]
    pinned: [find_tools, nope]
`
	cfg, err := Parse(strings.NewReader(file), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Unmatched([]string{"github__search", "github__issue"}, []string{"csv"}, func(e string) bool { return e == "find_tools" }) {
		got = append(got, w.Error())
	}
	want := []string{
		`f.yaml:3:21: pinned[1]: "githb__*" matches no tool`,
		`f.yaml:6:70: bundles.ops.include[4]: "nosuch" names no server, skill or tool`,
		`f.yaml:6:78: bundles.ops.include[5]: "gh__*" names no server, skill or tool`,
		`f.yaml:9:29: profiles.p.tools[1]: "nothing__*" matches no tool`,
		`f.yaml:10:25: profiles.p.allow[1]: "*zzz*" matches no tool`,
		`f.yaml:12:26: profiles.p.pinned[1]: "nope" matches no tool`,
	}
	if len(got) != len(want) {
		t.Fatalf("warnings:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d = %s\nwant it to start with %s", i, got[i], want[i])
		}
	}
}
