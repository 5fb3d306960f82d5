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
