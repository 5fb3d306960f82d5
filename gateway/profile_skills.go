package gateway

import (
	"fmt"
	"maps"
	"slices"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/skills"
)

// profileSkillProblems reports each skills: entry of a profile of cfg that
// names no skill of snap, at its file:line: an error when snap holds every
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
			if slices.Contains(ids, s) {
				continue
			}
			field := fmt.Sprintf("profiles.%s.skills[%d]", name, i)
			pos := cfg.Where(field)
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
