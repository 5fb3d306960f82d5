package config

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Unmatched returns a warning, with file:line, for each name or glob of
// the disclosure settings that matches nothing the gateway serves: the
// entries of pinned:, of each bundle's include: (a server, a skill, a
// tool name or glob; @bundles are checked when the config loads) and of
// each profile's tools:, allow: and pinned:. tools are the exposed names
// of every tool served (the catalog's, meta-tools included) and skills
// the skill IDs; call it once the servers are ready, as a server that is
// not serves no tools yet. Entries skip reports true for (such as the
// gateway's meta-tools, listed everywhere) are not checked; skip may be
// nil. deny: entries that match nothing are harmless and not reported.
func (c *Config) Unmatched(tools, skills []string, skip func(entry string) bool) []*Error {
	if skip == nil {
		skip = func(string) bool { return false }
	}
	var out []*Error
	globs := func(field string, list []string) {
		for i, g := range list {
			if g != "" && !skip(g) && !matchesAny(g, tools) {
				f := fmt.Sprintf("%s[%d]", field, i)
				out = append(out, &Error{Pos: c.where(f), Field: f,
					Msg: fmt.Sprintf("%q matches no tool the gateway serves; check the name against `skillgate tools list`", g)})
			}
		}
	}
	globs("pinned", c.Pinned)
	for _, name := range slices.Sorted(maps.Keys(c.Bundles)) {
		for i, t := range c.Bundles[name].Include {
			if t == "" || strings.HasPrefix(t, "@") || skip(t) || c.targetExists(t, tools, skills) {
				continue
			}
			f := fmt.Sprintf("bundles.%s.include[%d]", name, i)
			out = append(out, &Error{Pos: c.where(f), Field: f,
				Msg: fmt.Sprintf("%q names no server, skill or tool the gateway serves; check the name against `skillgate tools list`", t)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Profiles)) {
		p, f := c.Profiles[name], "profiles."+name
		globs(f+".tools", p.Tools)
		globs(f+".allow", p.Allow)
		globs(f+".pinned", p.Pinned)
	}
	return out
}

// targetExists reports whether t, an activation target, names a server of
// c, one of skills, or matches one of tools; server:, skill: and tool:
// say which.
func (c *Config) targetExists(t string, tools, skills []string) bool {
	kind, rest, ok := strings.Cut(t, ":")
	if !ok || !slices.Contains([]string{"server", "skill", "tool"}, kind) {
		kind, rest = "", t
	}
	_, server := c.Servers[rest]
	return (kind == "" || kind == "server") && server ||
		(kind == "" || kind == "skill") && slices.Contains(skills, rest) ||
		(kind == "" || kind == "tool") && matchesAny(rest, tools)
}

// matchesAny reports whether glob matches one of names.
func matchesAny(glob string, names []string) bool {
	for _, n := range names {
		if ok, _ := path.Match(glob, n); ok {
			return true
		}
	}
	return false
}
