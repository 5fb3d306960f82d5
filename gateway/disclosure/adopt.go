package disclosure

import (
	"bytes"
	"maps"
	"strings"

	"github.com/skillgate/skillgate/gateway/catalog"
)

// Adopt carries the sessions' activations of old, the rules a reload
// replaces with d, over to d: each session keeps, on each endpoint d still
// has, every target d still serves there; a target d no longer serves
// there (a tool a new deny drops, a server gone from the profile) is
// dropped, and so is a session of a profile d has not. Activations d
// already holds for a session (made while the rules were swapped) stay.
//
// It returns the sessions whose tools/list on snap differs under d from
// under old: those, and only those, need a list_changed for their
// activations (BaseChanged tells whether the others need one too).
func (d *Disclosure) Adopt(old *Disclosure, snap *catalog.Snapshot) (changed []string) {
	if old == nil || old == d {
		return nil
	}
	old.sessMu.Lock()
	olds := maps.Clone(old.sessions)
	old.sessMu.Unlock()
	seen := map[string]bool{}
	for key, ost := range olds {
		session, profile, _ := strings.Cut(key, "\x00")
		req := Request{Profile: profile, Session: session}
		before := old.ToolsJSON(snap, req)
		if profile == "" || d.HasProfile(profile) {
			d.carry(snap, req, ost)
		}
		if !bytes.Equal(before, d.ToolsJSON(snap, req)) && !seen[session] {
			seen[session] = true
			changed = append(changed, session)
		}
	}
	return changed
}

// carry copies into d what ost, a session's state under other rules,
// activated and d still serves on req's endpoint.
func (d *Disclosure) carry(snap *catalog.Snapshot, req Request, ost *state) {
	ost.mu.Lock()
	active := maps.Clone(ost.active)
	bundles := maps.Clone(ost.bundles)
	used := ost.used
	ost.mu.Unlock()
	v := d.view(req.Profile)
	keep := map[target]bool{}
	for t := range active {
		if d.stillServed(snap, v, t) {
			keep[t] = true
		}
	}
	if len(keep) == 0 {
		return
	}
	st := d.session(req, true)
	st.mu.Lock()
	defer st.mu.Unlock()
	for t := range keep {
		st.active[t] = true
	}
	for b, ts := range bundles {
		if _, ok := d.bundles[b]; ok {
			if _, had := st.bundles[b]; !had {
				st.bundles[b] = ts
			}
		}
	}
	if used.After(st.used) {
		st.used = used
	}
	st.gen++
}

// stillServed reports whether v, under d's rules, serves the activated
// target t: the target could be activated there now.
func (d *Disclosure) stillServed(snap *catalog.Snapshot, v *view, t target) bool {
	switch t.kind {
	case "group":
		_, ok := d.groups[t.name]
		return ok
	case "glob":
		for _, it := range snap.Tools() {
			if matchAny([]string{t.name}, it.Name) && v.serves(it) {
				return true
			}
		}
		return false
	case "tool":
		_, err := d.resolveOne(snap, v, "tool:"+t.name)
		return err == ""
	case "server", "skill":
		got, err := d.resolveOne(snap, v, t.kind+":"+t.name)
		return err == "" && got == t
	}
	return false
}

// BaseChanged reports whether an endpoint that old and d both have lists
// other tools on snap under d than under old, for a session that activated
// nothing: every client of such an endpoint needs a list_changed.
func (d *Disclosure) BaseChanged(old *Disclosure, snap *catalog.Snapshot) bool {
	if old == nil || old == d {
		return false
	}
	profiles := []string{""}
	for _, p := range d.Profiles() {
		if old.HasProfile(p) {
			profiles = append(profiles, p)
		}
	}
	for _, p := range profiles {
		if !bytes.Equal(old.baseList(snap, p), d.baseList(snap, p)) {
			return true
		}
	}
	return false
}
