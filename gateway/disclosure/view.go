package disclosure

import (
	"path"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/catalog"
)

// Disclosure modes.
const (
	// ModeAll lists every tool of the endpoint (the meta-tools included).
	ModeAll = "all"
	// ModeProgressive lists the meta-tools, pinned tools and what the
	// session activated.
	ModeProgressive = "progressive"
)

// Profile is a named endpoint's fixed tool set; see config.Profile.
type Profile struct {
	Name        string
	Description string
	// Mode is ModeAll or ModeProgressive; "" means the default endpoint's.
	Mode    string
	Servers []string
	Skills  []string
	Tools   []string
	Allow   []string
	Deny    []string
	Pinned  []string
}

// Bundle is a named set of activation targets; see config.Bundle.
type Bundle struct {
	Description string
	Include     []string
}

// view is the rule of one endpoint: which tools it serves at all (its
// base), which it lists without activation (in progressive mode: pinned).
type view struct {
	name        string // "" for the default endpoint
	description string
	mode        string
	servers     map[string]bool
	skills      map[string]bool
	tools       []string
	allow       []string
	deny        []string
	pinned      []string
	// everything: no servers, skills or tools given
	everything bool
	// withheld is Options.Withheld.
	withheld func(*catalog.Item) string
}

func newView(p Profile, defMode string) *view {
	v := &view{
		name: p.Name, description: p.Description, mode: p.Mode,
		servers: set(p.Servers), skills: set(p.Skills),
		tools: p.Tools, allow: p.Allow, deny: p.Deny, pinned: p.Pinned,
		everything: len(p.Servers) == 0 && len(p.Skills) == 0 && len(p.Tools) == 0,
	}
	if v.mode == "" {
		v.mode = defMode
	}
	if v.mode != ModeProgressive {
		v.mode = ModeAll
	}
	return v
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// serves reports whether the endpoint serves it at all: it may be listed,
// found, described and called there.
func (v *view) serves(it *catalog.Item) bool {
	if v.withheld != nil && v.withheld(it) != "" {
		return false
	}
	if !v.everything && !v.servers[it.Source] && !(it.Skill != "" && v.skills[it.Skill]) && !v.takes(it) {
		return false
	}
	if len(v.allow) > 0 && !matchAny(v.allow, it.Name) {
		return false
	}
	return !matchAny(v.deny, it.Name)
}

// takes reports whether the profile's tools globs take it. The gateway's
// management tools (a hidden group's, such as skill__repo_add, which
// fetches any git URL) need an entry that names them: their own name or a
// glob starting with the group's name ("skill__*"); "*skill*" is not one.
func (v *view) takes(it *catalog.Item) bool {
	if it.Group == "" {
		return matchAny(v.tools, it.Name)
	}
	for _, g := range v.tools {
		lit := g
		if i := strings.IndexAny(g, "*?["); i >= 0 {
			lit = g[:i]
		}
		if strings.HasPrefix(lit, it.Group) && matchAny([]string{g}, it.Name) {
			return true
		}
	}
	return false
}

// servesOther is serves for prompts and resources: a profile narrowed to
// servers or skills serves only theirs; tool globs say nothing about them.
// An item of every skill (the skill:// file template) is served where any
// skill is.
func (v *view) servesOther(it *catalog.Item) bool {
	if len(v.servers) == 0 && len(v.skills) == 0 {
		return true
	}
	return v.servers[it.Source] || (it.Skill != "" && v.skills[it.Skill]) || (it.EverySkill && len(v.skills) > 0)
}

// pinnedTool reports whether it is listed without activation in
// progressive mode.
func (v *view) pinnedTool(it *catalog.Item) bool { return matchAny(v.pinned, it.Name) }

// listedBase reports whether it is listed for a session that activated
// nothing.
func (v *view) listedBase(it *catalog.Item) bool {
	if !v.serves(it) {
		return false
	}
	if v.mode == ModeProgressive {
		return v.pinnedTool(it)
	}
	return it.Group == ""
}

// matchAny reports whether name matches one of the globs (path.Match
// syntax: * ? [...]).
func matchAny(globs []string, name string) bool {
	return slices.ContainsFunc(globs, func(g string) bool {
		if g == name {
			return true
		}
		ok, _ := path.Match(g, name)
		return ok
	})
}

func isGlob(s string) bool {
	for _, c := range s {
		switch c {
		case '*', '?', '[':
			return true
		}
	}
	return false
}
