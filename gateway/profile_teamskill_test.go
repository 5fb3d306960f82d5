package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
)

// TestProfileTeamSkill: a profile may name a team's skill by its unique
// name or by its ID (team/name), as docs/SKILLS.md promises: the config
// is valid, validate finds the skill, and the profile's endpoint serves
// it (find_skills, load_skill, its prompt and SKILL.md resource) and no
// other, in both eras.
func TestProfileTeamSkill(t *testing.T) {
	for _, entry := range []string{"brand-guidelines", "team-a/brand-guidelines"} {
		t.Run(strings.ReplaceAll(entry, "/", "_"), func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"team-a/brand/SKILL.md": skillMD("brand-guidelines", "Apply the brand guidelines."),
				"other/SKILL.md":        skillMD("other", "Another skill."),
			})
			yaml := fmt.Sprintf("skills: {dirs: [%q]}\nprofiles:\n  brand: {skills: [%s]}\n", dir, entry)
			cfg, err := config.Parse(strings.NewReader(yaml), "f.yaml", nil)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			probs, err := gateway.ValidateSkills(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probs {
				if strings.Contains(p.Msg, "profiles.") {
					t.Errorf("validate: %s", p)
				}
			}
			r := startGateway(t, yaml, nil)
			r.waitReady(t)
			for era, call := range eraCallers(t, r.url+"/mcp/p/brand") {
				find := call("tools/call", "find_skills", `{"name":"find_skills","arguments":{}}`)
				if !strings.Contains(find, "team-a/brand-guidelines: Apply") || strings.Contains(find, "other") {
					t.Errorf("%s find_skills: %s", era, find)
				}
				load := call("tools/call", "load_skill", `{"name":"load_skill","arguments":{"skill":"brand-guidelines"}}`)
				if !strings.Contains(load, "Follow these steps") {
					t.Errorf("%s load_skill: %s", era, load)
				}
				prompts := call("prompts/list", "", `{}`)
				if !strings.Contains(prompts, "team-a_brand-guidelines") || strings.Contains(prompts, `"other"`) {
					t.Errorf("%s prompts/list: %s", era, prompts)
				}
				res := call("resources/list", "", `{}`)
				if !strings.Contains(res, "skill://team-a/brand-guidelines/SKILL.md") || strings.Contains(res, "skill://other/") {
					t.Errorf("%s resources/list: %s", era, res)
				}
				read := call("resources/read", "skill://team-a/brand-guidelines/SKILL.md", `{"uri":"skill://team-a/brand-guidelines/SKILL.md"}`)
				if !strings.Contains(read, "Follow these steps") {
					t.Errorf("%s resources/read: %s", era, read)
				}
			}
		})
	}
}

// TestProfileSkillEntries: a profile's skills: entry is a skill name or a
// team skill's ID; anything else is a config error.
func TestProfileSkillEntries(t *testing.T) {
	for entry, ok := range map[string]bool{"brand": true, "team-a/brand": true, "a/b/c": false, "/x": false, "x/": false, "a b": false} {
		yaml := fmt.Sprintf("skills: {dirs: [skills]}\nprofiles:\n  p: {skills: [%q]}\n", entry)
		_, err := config.Parse(strings.NewReader(yaml), "f.yaml", nil)
		if (err == nil) != ok {
			t.Errorf("skills: [%q]: err %v, want ok %v", entry, err, ok)
		}
	}
}

// TestProfileTeamSkillReload: a reload that gives the profile naming a
// team's skill by its name new rules (another description here) keeps
// serving the skill there; one that makes a profile name it starts to.
func TestProfileTeamSkillReload(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"team-a/brand/SKILL.md": skillMD("brand-guidelines", "Apply the brand guidelines."),
		"other/SKILL.md":        skillMD("other", "Another skill."),
	})
	yaml := func(entry, desc string) string {
		return fmt.Sprintf("skills: {dirs: [%q]}\nprofiles:\n  brand: {description: %s, skills: [%s]}\n", dir, desc, entry)
	}
	r := startGateway(t, yaml("other", "one"), nil)
	r.waitReady(t)
	find := func() string {
		return eraCallers(t, r.url+"/mcp/p/brand")["legacy"]("tools/call", "find_skills", `{"name":"find_skills","arguments":{}}`)
	}
	if got := find(); !strings.Contains(got, "other: Another") {
		t.Fatalf("before the reload: %s", got)
	}
	for _, desc := range []string{"two", "three"} {
		cfg, err := config.Parse(strings.NewReader(yaml("brand-guidelines", desc)), "test.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.gw.Reload(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		if got := find(); !strings.Contains(got, "team-a/brand-guidelines: Apply") || strings.Contains(got, "other: Another") {
			t.Errorf("after the reload to %s: %s", desc, got)
		}
	}
}
