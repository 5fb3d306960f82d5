package disclosure

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
)

// Options configure a Disclosure.
type Options struct {
	// Mode is the default endpoint's mode: ModeAll (also for "") or
	// ModeProgressive.
	Mode string
	// Pinned are tool names or globs the default endpoint lists in
	// progressive mode.
	Pinned []string
	// Profiles are the named endpoints.
	Profiles []Profile
	// Bundles are activation targets by name (without the @).
	Bundles map[string]Bundle
	// Groups are the hidden tool groups (catalog.Source.Group) and what
	// each is for; a client activates one as @<group>.
	Groups map[string]string
	// Servers are the configured server names: activating one is accepted
	// before its tools are loaded.
	Servers []string
	// SessionIdle drops the activations of a session unused for this long
	// (a client that never ended its session); default 24h.
	SessionIdle time.Duration
	// Skills, when set, reports whether a skill exists and what activating
	// it brings besides its own tools (its requires, transitively: targets
	// such as "skill:other", "server:github", tool names and globs).
	// Activating a skill activates those too.
	Skills func(name string) (requires []string, ok bool)
	// ToolPending, when set, says why a tool the catalog lacks may still
	// come: the source it would come from, and why it has not (its
	// server is failed or starting, with the last error); "" twice when
	// nothing explains its absence. An endpoint that does not serve that
	// source does not tell.
	ToolPending func(name string) (source, why string)
	// ServerPending, when set, says why a configured server has no tools
	// ("server flaky is failed: <its last error>"), or "" when it is ready
	// or not a server.
	ServerPending func(server string) string
	// IdleGroups are hidden groups whose tools have nothing to act on (the
	// service tools when no service is configured): find_tools leaves them
	// out of a search unless asked for the group by name (an empty query
	// still lists them); they stay activatable and callable.
	IdleGroups []string
	// Withheld, when set, says why no endpoint serves a tool, whatever
	// its rules (the management tools that change what the gateway runs,
	// under admin.writes: none), or "" for a tool it does not withhold. A
	// withheld tool cannot be listed, found, described, activated or
	// called; a call is refused with the reason.
	Withheld func(it *catalog.Item) string
}

// Request identifies who asks: the endpoint and, for clients of the
// 2025-11-25 era and older, the session. Activations belong to a session;
// without one (the stateless 2026-07-28 era) nothing is remembered.
type Request struct {
	// Profile is the endpoint's profile name, "" for the default endpoint.
	Profile string
	// Session is the client's session, "" when it has none.
	Session string
}

// Disclosure decides what each endpoint and session lists and serves, and
// runs the meta-tools. It is safe for concurrent use; list answers are
// cached per catalog snapshot and per session.
type Disclosure struct {
	opts    Options
	def     *view
	views   map[string]*view
	bundles map[string]Bundle
	groups  map[string]string
	servers map[string]bool
	idle    map[string]bool

	idx   atomic.Pointer[snapIndex]
	lists atomic.Pointer[snapLists]
	mu    sync.Mutex // builds idx and lists

	sessMu   sync.Mutex
	sessions map[string]*state // Request.Session + "\x00" + Request.Profile
	sweep    time.Time
}

type snapIndex struct {
	snap *catalog.Snapshot
	ix   *index
}

type snapLists struct {
	snap  *catalog.Snapshot
	lists map[string][]byte // view name -> tools/list array for a session with no activation
}

// New returns a Disclosure.
func New(opts Options) *Disclosure {
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = 24 * time.Hour
	}
	d := &Disclosure{
		opts:     opts,
		views:    map[string]*view{},
		bundles:  opts.Bundles,
		groups:   opts.Groups,
		servers:  set(opts.Servers),
		idle:     set(opts.IdleGroups),
		sessions: map[string]*state{},
	}
	mode := opts.Mode
	if mode != ModeProgressive {
		mode = ModeAll
	}
	d.def = newView(Profile{Pinned: opts.Pinned}, mode)
	d.def.withheld = opts.Withheld
	for _, p := range opts.Profiles {
		d.views[p.Name] = newView(p, mode)
		d.views[p.Name].withheld = opts.Withheld
	}
	return d
}

// HasProfile reports whether name is a profile.
func (d *Disclosure) HasProfile(name string) bool {
	_, ok := d.views[name]
	return ok
}

// Profiles returns the profile names, sorted.
func (d *Disclosure) Profiles() []string { return slices.Sorted(maps.Keys(d.views)) }

func (d *Disclosure) view(profile string) *view {
	if v, ok := d.views[profile]; ok {
		return v
	}
	return d.def
}

// Mode returns the mode of the request's endpoint.
func (d *Disclosure) Mode(profile string) string { return d.view(profile).mode }

// IsMeta reports whether name is one of the meta-tools.
func IsMeta(name string) bool {
	_, ok := metaByName[name]
	return ok
}

// Serves reports whether the request's endpoint serves the tool, prompt or
// resource it: whether it may be called, read or fetched there, listed or
// not.
func (d *Disclosure) Serves(req Request, it *catalog.Item) bool {
	v := d.view(req.Profile)
	if it.Kind == catalog.Tool {
		return v.serves(it)
	}
	return v.servesOther(it)
}

// ToolsJSON returns the tools/list array for req: the meta-tools first, then
// the listed tools in snapshot order. The bytes are shared; do not modify.
func (d *Disclosure) ToolsJSON(snap *catalog.Snapshot, req Request) []byte {
	if st := d.session(req, false); st != nil {
		if b := st.list(d, snap); b != nil {
			return b
		}
	}
	return d.baseList(snap, req.Profile)
}

// OtherJSON returns the list array of prompts, resources or resource
// templates for the request's endpoint: the snapshot's own bytes unless a
// profile narrows them.
func (d *Disclosure) OtherJSON(snap *catalog.Snapshot, kind catalog.Kind, req Request) []byte {
	var items []*catalog.Item
	var all []byte
	switch kind {
	case catalog.Prompt:
		items, all = snap.Prompts(), snap.PromptsJSON()
	case catalog.Resource:
		items, all = snap.Resources(), snap.ResourcesJSON()
	case catalog.ResourceTemplate:
		items, all = snap.ResourceTemplates(), snap.ResourceTemplatesJSON()
	default:
		return nil
	}
	v := d.view(req.Profile)
	if len(v.servers) == 0 && len(v.skills) == 0 {
		return all
	}
	return encodeList(nil, items, v.servesOther)
}

// OthersChanged reports whether an endpoint that old and d both have (the
// default one, and each profile of both) lists other items of one of kinds
// (prompts, resources, resource templates) under d than under old, on
// snap: new rules need that kind's list_changed only then. A profile new
// in d has no clients yet; one gone has no endpoint left.
func (d *Disclosure) OthersChanged(old *Disclosure, snap *catalog.Snapshot, kinds ...catalog.Kind) bool {
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
		for _, k := range kinds {
			if !bytes.Equal(old.OtherJSON(snap, k, Request{Profile: p}), d.OtherJSON(snap, k, Request{Profile: p})) {
				return true
			}
		}
	}
	return false
}

// baseList is the list of an endpoint for a session that activated nothing.
func (d *Disclosure) baseList(snap *catalog.Snapshot, profile string) []byte {
	if sl := d.lists.Load(); sl != nil && sl.snap == snap {
		if b, ok := sl.lists[profile]; ok {
			return b
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sl := d.lists.Load()
	if sl == nil || sl.snap != snap {
		sl = &snapLists{snap: snap, lists: map[string][]byte{}}
	}
	if b, ok := sl.lists[profile]; ok {
		return b
	}
	v := d.view(profile)
	b := encodeList(metaJSON, snap.Tools(), v.listedBase)
	// copy on write: readers hold the old map
	next := &snapLists{snap: snap, lists: maps.Clone(sl.lists)}
	next.lists[profile] = b
	d.lists.Store(next)
	return b
}

// encodeList writes a JSON array of prefix's elements and the Raw of each
// item keep accepts.
func encodeList(prefix [][]byte, items []*catalog.Item, keep func(*catalog.Item) bool) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for _, p := range prefix {
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
		n++
	}
	for _, it := range items {
		if !keep(it) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(it.Raw)
		n++
	}
	b.WriteByte(']')
	return b.Bytes()
}

// index returns the search index of snap, building it on first use.
func (d *Disclosure) index(snap *catalog.Snapshot) *index {
	if si := d.idx.Load(); si != nil && si.snap == snap {
		return si.ix
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if si := d.idx.Load(); si != nil && si.snap == snap {
		return si.ix
	}
	ix := buildIndex(snap)
	d.idx.Store(&snapIndex{snap: snap, ix: ix})
	return ix
}

// EndSession drops everything the session activated, on every endpoint.
func (d *Disclosure) EndSession(session string) {
	if session == "" {
		return
	}
	d.sessMu.Lock()
	defer d.sessMu.Unlock()
	for k := range d.sessions {
		if strings.HasPrefix(k, session+"\x00") {
			delete(d.sessions, k)
		}
	}
}

// Sessions returns how many sessions hold activations.
func (d *Disclosure) Sessions() int {
	d.sessMu.Lock()
	defer d.sessMu.Unlock()
	return len(d.sessions)
}

// session returns the request's activation state, creating it when create
// is set; nil without a session.
func (d *Disclosure) session(req Request, create bool) *state {
	if req.Session == "" {
		return nil
	}
	key := req.Session + "\x00" + req.Profile
	now := time.Now()
	d.sessMu.Lock()
	defer d.sessMu.Unlock()
	st := d.sessions[key]
	if st == nil && create {
		if now.Sub(d.sweep) > time.Minute {
			d.sweep = now
			for k, s := range d.sessions {
				if now.Sub(s.usedAt()) > d.opts.SessionIdle {
					delete(d.sessions, k)
				}
			}
		}
		st = newState(d.view(req.Profile))
		d.sessions[key] = st
	}
	if st != nil {
		st.touch(now)
	}
	return st
}

// target is one resolved activation target.
type target struct {
	kind string // server, skill, group, tool, glob
	name string
}

func (t target) String() string {
	switch t.kind {
	case "group":
		return "@" + t.name
	case "tool":
		return t.name
	}
	return t.kind + ":" + t.name
}

// state is one session's activations on one endpoint.
type state struct {
	v *view

	mu      sync.Mutex
	active  map[target]bool
	bundles map[string][]target // activated bundles and what they brought
	gen     uint64
	used    time.Time

	cacheSnap *catalog.Snapshot
	cacheGen  uint64
	cache     []byte
}

func newState(v *view) *state {
	return &state{v: v, active: map[target]bool{}, bundles: map[string][]target{}}
}

func (st *state) touch(now time.Time) {
	st.mu.Lock()
	st.used = now
	st.mu.Unlock()
}

func (st *state) usedAt() time.Time {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.used
}

// shows reports whether the activations make it visible. st.mu is held.
func (st *state) shows(it *catalog.Item) bool {
	if st.active[target{"tool", it.Name}] || (it.Group != "" && st.active[target{"group", it.Group}]) {
		return true
	}
	if it.Group != "" {
		return false // a group's tools need the group (or their own name)
	}
	if st.active[target{"server", it.Source}] || (it.Skill != "" && st.active[target{"skill", it.Skill}]) {
		return true
	}
	for t := range st.active {
		if t.kind == "glob" && matchAny([]string{t.name}, it.Name) {
			return true
		}
	}
	return false
}

// listed reports whether it is in the session's tools/list. st.mu is held.
func (st *state) listed(it *catalog.Item) bool {
	return st.v.listedBase(it) || (st.v.serves(it) && st.shows(it))
}

// list returns the session's tools/list array, or nil when it activated
// nothing.
func (st *state) list(d *Disclosure, snap *catalog.Snapshot) []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.active) == 0 {
		return nil
	}
	if st.cacheSnap == snap && st.cacheGen == st.gen {
		return st.cache
	}
	st.cache = encodeList(metaJSON, snap.Tools(), st.listed)
	st.cacheSnap, st.cacheGen = snap, st.gen
	return st.cache
}

// listedNames returns the names of the tools the session lists. st.mu is held.
func (st *state) listedNames(snap *catalog.Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, it := range snap.Tools() {
		if st.listed(it) {
			out[it.Name] = true
		}
	}
	return out
}

// resolve turns activation names into targets served by v, expanding
// bundles. Every problem is reported; the caller applies nothing on error.
//
// A skill's requirements that cannot be activated here (a server that is
// not configured, a tool outside the profile) do not stop the skill: they
// come back in missing.
func (d *Disclosure) resolve(snap *catalog.Snapshot, v *view, names []string) (targets []target, bundles map[string][]target, errs, missing []string) {
	bundles = map[string][]target{}
	seen := map[target]bool{}
	add := func(t target) {
		if !seen[t] {
			seen[t] = true
			targets = append(targets, t)
		}
	}
	var expand func(name string, chain []string) []target
	expand = func(name string, chain []string) []target {
		var got []target
		if b, ok := strings.CutPrefix(name, "@"); ok {
			if slices.Contains(chain, b) {
				errs = append(errs, fmt.Sprintf("bundle @%s includes itself: @%s -> @%s", b, strings.Join(chain, " -> @"), b))
				return nil
			}
			if bd, ok := d.bundles[b]; ok {
				for _, inc := range bd.Include {
					got = append(got, expand(inc, append(chain, b))...)
				}
				if len(chain) == 0 {
					bundles[b] = got
				}
				return got
			}
			if _, ok := d.groups[b]; ok {
				return []target{{"group", b}}
			}
			errs = append(errs, fmt.Sprintf("unknown bundle or group %q; %s", name, d.knownBundles()))
			return nil
		}
		t, err := d.resolveOne(snap, v, name)
		if err != "" {
			if len(chain) > 0 {
				err = fmt.Sprintf("bundle @%s: %s", chain[len(chain)-1], err)
			}
			errs = append(errs, err)
			return nil
		}
		out := []target{t}
		if t.kind == "skill" && d.opts.Skills != nil {
			reqs, _ := d.opts.Skills(t.name)
			for _, r := range reqs {
				if r == "skill:"+t.name {
					continue
				}
				dep, err := d.resolveOne(snap, v, r)
				if err != "" {
					missing = append(missing, fmt.Sprintf("skill %s requires %s: %s", t.name, r, err))
					continue
				}
				out = append(out, dep)
			}
		}
		return out
	}
	for _, n := range names {
		for _, t := range expand(strings.TrimSpace(n), nil) {
			add(t)
		}
	}
	return targets, bundles, errs, missing
}

func (d *Disclosure) knownBundles() string {
	var names []string
	for b := range d.bundles {
		names = append(names, "@"+b)
	}
	for g := range d.groups {
		names = append(names, "@"+g)
	}
	if len(names) == 0 {
		return "no bundles are configured"
	}
	sort.Strings(names)
	return "known: " + strings.Join(names, ", ")
}

// resolveOne resolves one name that is not a bundle: an explicit
// server:/skill:/tool: target, an exposed tool name, a server, a skill or
// a glob of tool names.
func (d *Disclosure) resolveOne(snap *catalog.Snapshot, v *view, name string) (target, string) {
	if name == "" {
		return target{}, "empty target; name a server, a tool, a skill or a @bundle"
	}
	kind, rest, explicit := strings.Cut(name, ":")
	if !explicit || !slices.Contains([]string{"server", "skill", "tool"}, kind) {
		kind, rest = "", name
	}
	servedBy := func(match func(*catalog.Item) bool) (served, exists bool) {
		for _, it := range snap.Tools() {
			if match(it) {
				exists = true
				if v.serves(it) {
					return true, true
				}
			}
		}
		return false, exists
	}
	where := "this endpoint"
	if v.name != "" {
		where = "profile " + v.name
	}
	if kind == "" || kind == "tool" {
		if it, ok := snap.Tool(rest); ok {
			if IsMeta(rest) {
				return target{}, fmt.Sprintf("%s is a meta-tool; it is always listed", rest)
			}
			if !v.serves(it) {
				return target{}, fmt.Sprintf("tool %s is not available on %s", rest, where)
			}
			return target{"tool", rest}, ""
		}
		if IsMeta(rest) {
			return target{}, fmt.Sprintf("%s is a meta-tool; it is always listed", rest)
		}
		if isGlob(rest) {
			served, _ := servedBy(func(it *catalog.Item) bool { return matchAny([]string{rest}, it.Name) })
			if !served {
				return target{}, fmt.Sprintf("glob %q matches no tool on %s", rest, where)
			}
			return target{"glob", rest}, ""
		}
		if kind == "tool" {
			return target{}, d.unknown(snap, v, "tool", rest)
		}
	}
	if kind == "" || kind == "server" {
		served, exists := servedBy(func(it *catalog.Item) bool { return it.Source == rest && it.Group == "" })
		switch {
		case served:
			return target{"server", rest}, ""
		case exists:
			return target{}, fmt.Sprintf("server %s has no tools on %s", rest, where)
		case d.servers[rest] && (len(v.servers) == 0 || v.servers[rest]):
			return target{"server", rest}, "" // configured, not loaded yet
		}
		if kind == "server" {
			return target{}, d.unknown(snap, v, "server", rest)
		}
	}
	served, exists := servedBy(func(it *catalog.Item) bool { return it.Skill == rest })
	switch {
	case served:
		return target{"skill", rest}, ""
	case exists:
		return target{}, fmt.Sprintf("skill %s has no tools on %s", rest, where)
	}
	if d.opts.Skills != nil {
		if _, ok := d.opts.Skills(rest); ok {
			return target{"skill", rest}, "" // a skill without tools of its own
		}
	}
	return target{}, d.unknown(snap, v, kind, rest)
}
