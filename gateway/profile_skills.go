package gateway

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/skills"
)

// profileSkillProblems reports each skills: entry of a profile of cfg that
// names no skill of snap (by ID, or by a name one skill alone has), or
// names several, at its file:line: an error when snap holds every
// skill cfg serves (allKnown: no repository, or every one fetched), a
// warning otherwise, as the skill may be in a repository not fetched yet.
func profileSkillProblems(cfg *config.Config, snap *skills.Snapshot, allKnown bool) []skills.Problem {
	var ids []string
	for _, sk := range snap.Skills() {
		ids = append(ids, sk.ID)
	}
	slices.Sort(ids)
	var out []skills.Problem
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		for i, s := range cfg.Profiles[name].Skills {
			_, err := snap.Lookup(s)
			if err == nil {
				continue
			}
			field := fmt.Sprintf("profiles.%s.skills[%d]", name, i)
			pos := cfg.Where(field)
			if errors.Is(err, skills.ErrAmbiguousSkill) {
				out = append(out, skills.Problem{Path: pos.File, Line: pos.Line, Msg: fmt.Sprintf("%s: %v", field, err)})
				continue
			}
			msg := fmt.Sprintf("%s: no skill %q in the skills dirs; the skills are %s; fix the name or add the skill", field, s, quoted(ids))
			if !allKnown {
				msg = fmt.Sprintf("%s: no skill %q in the skills dirs or the repositories fetched so far (%s); it may come with a repository the gateway fetches at start", field, s, quoted(ids))
			}
			out = append(out, skills.Problem{Path: pos.File, Line: pos.Line, Msg: msg, Warning: !allKnown})
		}
	}
	return out
}

func quoted(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", ids)
}

// profileSkillIDs returns cfg with each profile's skills: entries that name
// a skill of snap by its name (a team's skill, brand-guidelines for
// team-a/brand-guidelines) replaced by the skill's ID, since the catalog
// and disclosure know skills by ID; and a key that changes when that
// replacement does. Entries that name no skill, or several, stay as they
// are (profileSkillProblems reports them). Without any such entry it
// returns cfg itself and "".
func profileSkillIDs(cfg *config.Config, snap *skills.Snapshot) (*config.Config, string) {
	var key strings.Builder
	var profiles map[string]*config.Profile
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		p := cfg.Profiles[name]
		var ids []string
		for i, s := range p.Skills {
			sk, err := snap.Lookup(s)
			if err != nil || sk.ID == s {
				continue
			}
			if ids == nil {
				ids = slices.Clone(p.Skills)
			}
			ids[i] = sk.ID
			fmt.Fprintf(&key, "%s\x00%s\x00%s\n", name, s, sk.ID)
		}
		if ids == nil {
			continue
		}
		if profiles == nil {
			profiles = maps.Clone(cfg.Profiles)
		}
		c := *p
		c.Skills = ids
		profiles[name] = &c
	}
	if profiles == nil {
		return cfg, ""
	}
	c := *cfg
	c.Profiles = profiles
	return &c, key.String()
}

// applyProfileSkills makes the front end serve cfg's disclosure rules with
// the profiles' skill names resolved to IDs (profileSkillIDs), when that
// resolution differs from the one it serves; force applies it after a
// reload has set rules of its own.
func (g *Gateway) applyProfileSkills(room *skillsRoom, cfg *config.Config, force bool) {
	resolved, key := profileSkillIDs(cfg, room.lib.Snapshot())
	room.mu.Lock()
	old := room.profileKey
	room.profileKey = key
	room.mu.Unlock()
	if key == old && (!force || key == "") {
		return // served already, or the reload's own rules are these
	}
	g.serveNow(nil, newDisclosure(resolved, func() *Gateway { return g }))
}
