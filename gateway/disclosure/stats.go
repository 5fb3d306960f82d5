package disclosure

import (
	"github.com/skillgate/skillgate/gateway/catalog"
)

// EndpointStats is what a client of one endpoint pays for tools/list before
// it activates anything, next to what listing every tool it serves would cost.
type EndpointStats struct {
	// Endpoint is the path: /mcp or /mcp/p/<profile>.
	Endpoint string `json:"endpoint"`
	// Profile is "" for the default endpoint.
	Profile string `json:"profile,omitempty"`
	// Mode is the endpoint's disclosure mode.
	Mode string `json:"mode"`
	// Listed, Bytes and Tokens describe the tools/list array a new session
	// gets: its tool count (meta-tools included), size and estimated tokens.
	Listed int `json:"listed"`
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// Served, AllBytes and AllTokens describe the array listing every tool
	// the endpoint serves outside hidden groups (no meta-tools): the cost
	// without disclosure.
	Served    int `json:"served"`
	AllBytes  int `json:"all_bytes"`
	AllTokens int `json:"all_tokens"`
}

// Stats measures every endpoint's tools/list on snap.
func (d *Disclosure) Stats(snap *catalog.Snapshot) []EndpointStats {
	out := []EndpointStats{d.stats(snap, "")}
	for _, p := range d.Profiles() {
		out = append(out, d.stats(snap, p))
	}
	return out
}

func (d *Disclosure) stats(snap *catalog.Snapshot, profile string) EndpointStats {
	v := d.view(profile)
	st := EndpointStats{Endpoint: "/mcp", Profile: profile, Mode: v.mode}
	if profile != "" {
		st.Endpoint = "/mcp/p/" + profile
	}
	list := d.baseList(snap, profile)
	st.Bytes, st.Tokens = len(list), EstimateTokens(list)
	st.Listed = len(Names)
	for _, it := range snap.Tools() {
		if v.listedBase(it) {
			st.Listed++
		}
		if v.serves(it) && it.Group == "" {
			st.Served++
		}
	}
	all := encodeList(nil, snap.Tools(), func(it *catalog.Item) bool { return v.serves(it) && it.Group == "" })
	st.AllBytes, st.AllTokens = len(all), EstimateTokens(all)
	return st
}
