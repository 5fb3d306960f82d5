package disclosure

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// skillsSnap: a skills source (prompts and resources naming their skills,
// a template naming none) and a server with a prompt.
func skillsSnap() *catalog.Snapshot {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	return catalog.Build([]catalog.Source{
		{ID: "skills", SkillFromMeta: true, Defs: sdk.Definitions{
			Prompts: []json.RawMessage{
				raw(`{"name":"weekly","_meta":{"skillgate/skill":"weekly"}}`),
				raw(`{"name":"daily","_meta":{"skillgate/skill":"daily"}}`),
			},
			Resources: []json.RawMessage{
				raw(`{"uri":"skill://weekly/SKILL.md","name":"weekly","_meta":{"skillgate/skill":"weekly"}}`),
				raw(`{"uri":"skill://daily/SKILL.md","name":"daily","_meta":{"skillgate/skill":"daily"}}`),
			},
			ResourceTemplates: []json.RawMessage{raw(`{"uriTemplate":"skill://{+path}","name":"skill-file"}`)},
		}},
		{ID: "notes", Namespace: "notes", Defs: sdk.Definitions{Prompts: []json.RawMessage{raw(`{"name":"summarize"}`)}}},
	}, catalog.Options{})
}

// The skill:// template of a skills source belongs to every skill: a
// profile serving any skill serves it, one serving only servers does not.
func TestTemplateOfEverySkill(t *testing.T) {
	snap := skillsSnap()
	d := New(Options{Profiles: []Profile{
		{Name: "weekly", Skills: []string{"weekly"}},
		{Name: "notes", Servers: []string{"notes"}},
	}})
	for _, c := range []struct {
		profile string
		want    bool
	}{{"", true}, {"weekly", true}, {"notes", false}} {
		got := strings.Contains(string(d.OtherJSON(snap, catalog.ResourceTemplate, Request{Profile: c.profile})), "skill://{+path}")
		if got != c.want {
			t.Errorf("profile %q lists the template: %v, want %v", c.profile, got, c.want)
		}
	}
}

// OthersChanged tells new rules that change the prompts or resources of
// an endpoint both rule sets have, and nothing else.
func TestOthersChanged(t *testing.T) {
	snap := skillsSnap()
	rules := func(skills ...string) *Disclosure {
		return New(Options{Profiles: []Profile{{Name: "p", Skills: skills}}})
	}
	old := rules("weekly")
	for _, c := range []struct {
		what               string
		d                  *Disclosure
		prompts, resources bool
	}{
		{"the same rules", rules("weekly"), false, false},
		{"another skill", rules("daily"), true, true},
		{"a skill more", rules("weekly", "daily"), true, true},
		{"a new profile only", New(Options{Profiles: []Profile{{Name: "p", Skills: []string{"weekly"}}, {Name: "q", Servers: []string{"notes"}}}}), false, false},
		{"the profile gone", New(Options{}), false, false},
	} {
		if got := c.d.OthersChanged(old, snap, catalog.Prompt); got != c.prompts {
			t.Errorf("%s: prompts changed %v, want %v", c.what, got, c.prompts)
		}
		if got := c.d.OthersChanged(old, snap, catalog.Resource, catalog.ResourceTemplate); got != c.resources {
			t.Errorf("%s: resources changed %v, want %v", c.what, got, c.resources)
		}
	}
	if old.OthersChanged(nil, snap, catalog.Prompt) || old.OthersChanged(old, snap, catalog.Prompt) {
		t.Error("no old rules, or the same, changed something")
	}
}
