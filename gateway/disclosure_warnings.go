package gateway

import (
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
)

// DisclosureWarnings returns, for cfg (the config g runs), a warning with
// file:line for each entry of pinned:, a bundle's include: or a profile's
// tools:, allow: or pinned: that matches nothing g serves (see
// config.Config.Unmatched). It returns nil while a server is not ready:
// its tools are missing, and every glob meant for them would be reported.
// `skillgate profiles` prints them after its table.
func DisclosureWarnings(g *Gateway, cfg *config.Config) []*config.Error {
	for _, s := range g.Status() {
		if s.State != "ready" {
			return nil
		}
	}
	var tools, skillIDs []string
	for _, it := range g.Snapshot().Tools() {
		tools = append(tools, it.Name)
	}
	if lib := g.Skills(); lib != nil {
		for _, sk := range lib.Snapshot().Skills() {
			skillIDs = append(skillIDs, sk.ID)
		}
	}
	return cfg.Unmatched(tools, skillIDs, disclosure.IsMeta)
}

// logConfigWarnings logs, once every source had its first try (at the end
// of Start and of Reload), what `skillgate validate` and `skillgate
// profiles` would say of cfg's disclosure rules: each skill a profile names
// that no skills dir or fetched repository holds, and each name or glob of
// pinned:, bundles and profiles that matches nothing served. The gateway
// keeps serving: such an entry only leaves its endpoint without that tool
// or skill. A one-shot command (no clients) has its own report.
func (g *Gateway) logConfigWarnings(cfg *config.Config) {
	if !g.clients.Load() {
		return
	}
	g.mu.Lock()
	room := g.skills
	g.mu.Unlock()
	if room != nil && len(cfg.Profiles) > 0 {
		room.mu.Lock()
		allKnown := room.repoErr == nil && len(room.repoErrs) == 0
		room.mu.Unlock()
		for _, p := range profileSkillProblems(cfg, room.lib.Snapshot(), allKnown) {
			g.log.Warn("profile names an unknown skill", "problem", p.String())
		}
	}
	for _, w := range DisclosureWarnings(g, cfg) {
		g.log.Warn("disclosure rule matches nothing", "problem", w.Error())
	}
}
