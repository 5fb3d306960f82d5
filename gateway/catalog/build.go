package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
)

// Resolutions a Conflict may carry. "renamed to <name>" is built per rename.
const (
	resSkipped         = "skipped: missing name"
	resReserved        = "renamed: reserved name"
	resLowerPriority   = "dropped: lower priority"
	resEqualPriority   = "dropped: equal priority, listed later"
	resPolicyError     = "dropped: collision policy is error"
	resDuplicateURI    = "dropped: duplicate URI"
	resDuplicate       = "dropped: duplicate in source"
	resDuplicateSource = "dropped: duplicate source id"
	resInvalidName     = "renamed: invalid name"
	resNoSchema        = "served with an empty inputSchema"
	resReservedScheme  = "dropped: reserved URI scheme"
	resTooDeep         = "dropped: nested too deeply"
)

// MaxDepth is how deeply a definition's JSON may nest (objects and arrays).
// Real tool schemas stay far below it; clients that walk a schema
// recursively crash on thousands of levels (Python's recursion limit is
// 1000), so such a definition is dropped at intake.
const MaxDepth = 128

// candidate is one definition on its way into a Snapshot.
type candidate struct {
	src      *Source
	original string // the source's name or URI
	want     string // the exposed name or URI it asks for
	name     string // the exposed name it gets
	raw      []byte
	f        fields
}

type builder struct {
	opts      Options
	reserved  map[string]bool
	conflicts []Conflict
}

// Build makes a Snapshot of sources. The result depends only on the sources
// and options, not on the order of the sources slice: sources are taken by
// Order, then ID, and each source's items in the order it lists them. Build
// never fails; every collision and skipped item is a Conflict. Build does
// not keep sources or their definitions: items hold copies.
func Build(sources []Source, opts Options) *Snapshot {
	b := &builder{opts: opts.normalized(), reserved: make(map[string]bool, len(opts.Reserved))}
	for _, r := range b.opts.Reserved {
		b.reserved[r] = true
	}
	srcs := b.sources(sources)

	s := &Snapshot{sources: make([]string, len(srcs)), schemes: b.opts.ReservedSchemes}
	for i, src := range srcs {
		s.sources[i] = src.ID
	}
	s.tools, s.toolByName = b.kind(Tool, srcs, func(d *Source) []json.RawMessage { return d.Defs.Tools })
	s.prompts, s.promptByName = b.kind(Prompt, srcs, func(d *Source) []json.RawMessage { return d.Defs.Prompts })
	s.resources, s.resourceByURI = b.kind(Resource, srcs, func(d *Source) []json.RawMessage { return d.Defs.Resources })
	s.templates, _ = b.kind(ResourceTemplate, srcs, func(d *Source) []json.RawMessage { return d.Defs.ResourceTemplates })
	s.conflicts = b.conflicts

	s.matchOrder = slices.Clone(s.templates)
	slices.SortStableFunc(s.matchOrder, func(x, y *Item) int {
		return cmp.Compare(y.tmpl.literals, x.tmpl.literals) // names already ordered
	})
	s.toolsJSON = encodeList(s.tools)
	s.promptsJSON = encodeList(s.prompts)
	s.resourcesJSON = encodeList(s.resources)
	s.templatesJSON = encodeList(s.templates)

	s.mapping = make([]Mapping, 0, len(s.tools)+len(s.prompts)+len(s.resources)+len(s.templates))
	for _, list := range [][]*Item{s.tools, s.prompts, s.resources, s.templates} {
		for _, it := range list {
			s.mapping = append(s.mapping, Mapping{Exposed: it.Name, Source: it.Source, Original: it.Original, Kind: it.Kind})
		}
	}
	return s
}

// sources orders the sources by Order then ID and drops repeated IDs.
func (b *builder) sources(in []Source) []*Source {
	all := slices.Clone(in)
	slices.SortStableFunc(all, func(x, y Source) int {
		return cmp.Or(cmp.Compare(x.Order, y.Order), cmp.Compare(x.ID, y.ID))
	})
	out := make([]*Source, 0, len(all))
	seen := make(map[string]bool, len(all))
	for i := range all {
		src := &all[i]
		if seen[src.ID] {
			b.conflicts = append(b.conflicts, Conflict{Name: src.ID, Winner: src.ID, Loser: src.ID,
				Policy: b.opts.Policy, Resolution: resDuplicateSource})
			continue
		}
		seen[src.ID] = true
		out = append(out, src)
	}
	return out
}

// kind builds the items of one kind, ordered by exposed name, and an index.
func (b *builder) kind(k Kind, srcs []*Source, list func(*Source) []json.RawMessage) ([]*Item, map[string]*Item) {
	cands := b.gather(k, srcs, list)
	if b.opts.Policy == PolicyPriority {
		slices.SortStableFunc(cands, func(x, y *candidate) int { return cmp.Compare(y.src.Priority, x.src.Priority) })
	}
	if k == Tool || k == Prompt {
		cands = b.resolveNames(k, cands)
	} else {
		cands = b.resolveURIs(k, cands)
	}

	items := make([]*Item, len(cands))
	index := make(map[string]*Item, len(cands))
	for i, c := range cands {
		it := &Item{Kind: k, Name: c.name, Original: c.original, Source: c.src.ID, Executor: c.src.Executor, Group: c.src.Group, Skill: c.src.Skill,
			Title: c.f.title, Description: c.f.description}
		if c.src.SkillFromMeta && c.f.skill != "" {
			it.Skill = c.f.skill
		}
		it.EverySkill = c.src.SkillFromMeta && k != Tool && it.Skill == ""
		switch k {
		case Tool, Prompt:
			if c.name != c.original || len(c.f.nameSpans) > 1 {
				it.Raw = spliceName(c.raw, c.f.nameSpans, c.name)
			} else {
				it.Raw = bytes.Clone(c.raw)
			}
			if k == Tool && !c.f.hasSchema {
				it.Raw = withEmptySchema(it.Raw)
				b.conflicts = append(b.conflicts, Conflict{Kind: k, Name: c.name, Original: c.original, Loser: c.src.ID,
					Policy: b.opts.Policy, Resolution: resNoSchema})
			}
			if it.Title == "" && k == Tool {
				it.Title = c.f.ann
			}
		default:
			it.Raw = bytes.Clone(c.raw)
			if it.Title == "" {
				it.Title = c.f.name
			}
			if k == ResourceTemplate {
				it.tmpl = compileTemplate(c.name)
			}
		}
		items[i] = it
		index[it.Name] = it
	}
	slices.SortFunc(items, func(x, y *Item) int { return cmp.Compare(x.Name, y.Name) })
	return items, index
}

// gather parses every definition of kind k, skipping (and reporting) those
// without a name or URI and repeats of an item within its source.
func (b *builder) gather(k Kind, srcs []*Source, list func(*Source) []json.RawMessage) []*candidate {
	var cands []*candidate
	for _, src := range srcs {
		defs := list(src)
		seen := make(map[string]bool, len(defs))
		for _, raw := range defs {
			f, ok := parseFields(raw)
			var orig string
			switch k {
			case Tool, Prompt:
				orig, ok = f.name, ok && f.hasName && f.name != ""
			case Resource:
				orig, ok = f.uri, ok && f.hasURI && f.uri != ""
			case ResourceTemplate:
				orig, ok = f.uriTemplate, ok && f.hasTmpl && f.uriTemplate != ""
			}
			if !ok {
				b.conflicts = append(b.conflicts, Conflict{Kind: k, Loser: src.ID, Policy: b.opts.Policy, Resolution: resSkipped})
				continue
			}
			if nestedDeeper(raw, MaxDepth) {
				b.conflicts = append(b.conflicts, Conflict{Kind: k, Name: orig, Original: orig, Loser: src.ID,
					Policy: b.opts.Policy, Resolution: resTooDeep})
				continue
			}
			c := &candidate{src: src, original: orig, want: orig, raw: raw, f: f}
			if k == Tool || k == Prompt {
				c.want = finalName(joinName(src.Namespace, b.opts.Separator, orig))
			}
			if seen[orig] {
				b.conflicts = append(b.conflicts, Conflict{Kind: k, Name: c.want, Original: orig, Winner: src.ID, Loser: src.ID,
					Policy: b.opts.Policy, Resolution: resDuplicate})
				continue
			}
			seen[orig] = true
			if owner, ok := b.opts.ReservedSchemes[scheme(orig)]; ok && owner != src.ID && (k == Resource || k == ResourceTemplate) {
				b.conflicts = append(b.conflicts, Conflict{Kind: k, Name: orig, Original: orig, Winner: owner, Loser: src.ID,
					Policy: b.opts.Policy, Resolution: resReservedScheme})
				continue
			}
			if (k == Tool || k == Prompt) && !validName(orig) {
				b.conflicts = append(b.conflicts, Conflict{Kind: k, Name: c.want, Original: orig, Loser: src.ID,
					Policy: b.opts.Policy, Resolution: resInvalidName, Renamed: c.want})
			}
			cands = append(cands, c)
		}
	}
	return cands
}

// CountTools returns how many of one source's tool definitions a catalog
// serves: each named tool once (a name listed twice is served once, a
// definition without a name not at all), before any collision with
// another source.
func CountTools(defs []json.RawMessage) int {
	seen := make(map[string]bool, len(defs))
	for _, raw := range defs {
		if f, ok := parseFields(raw); ok && f.hasName && f.name != "" {
			seen[f.name] = true
		}
	}
	return len(seen)
}

// resolveNames gives each tool or prompt its exposed name. Candidates come
// in precedence order. Requested names are settled first, renames second,
// so a rename never takes a name another item asked for.
func (b *builder) resolveNames(k Kind, cands []*candidate) []*candidate {
	type rename struct {
		c      *candidate
		winner string // "" for a reserved name
	}
	taken := make(map[string]*candidate, len(cands))
	kept := make([]*candidate, 0, len(cands))
	var renames []rename
	for _, c := range cands {
		if b.reserved[c.want] {
			renames = append(renames, rename{c: c})
			continue
		}
		owner := taken[c.want]
		if owner == nil {
			c.name = c.want
			taken[c.name] = c
			kept = append(kept, c)
			continue
		}
		if b.opts.Policy == PolicyPrefix {
			renames = append(renames, rename{c: c, winner: owner.src.ID})
			continue
		}
		b.lose(k, c, owner)
	}
	for _, r := range renames {
		c := r.c
		base := finalName(joinName(c.src.ID, b.opts.Separator, c.original))
		name := base
		for n := 0; taken[name] != nil || b.reserved[name]; n++ {
			key := c.src.ID + "\x00" + c.original
			if n > 0 {
				key += "\x00" + strconv.Itoa(n)
			}
			name = withHash(base, key)
		}
		c.name = name
		taken[name] = c
		kept = append(kept, c)
		res := "renamed to " + name
		if r.winner == "" {
			res = resReserved
		}
		b.conflicts = append(b.conflicts, Conflict{Kind: k, Name: c.want, Winner: r.winner, Loser: c.src.ID,
			Policy: b.opts.Policy, Resolution: res, Renamed: name})
	}
	return kept
}

// resolveURIs keeps the first of each URI in precedence order.
func (b *builder) resolveURIs(k Kind, cands []*candidate) []*candidate {
	taken := make(map[string]*candidate, len(cands))
	kept := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		if owner := taken[c.want]; owner != nil {
			b.lose(k, c, owner)
			continue
		}
		c.name = c.want
		taken[c.name] = c
		kept = append(kept, c)
	}
	return kept
}

// lose reports c dropped in favour of owner.
func (b *builder) lose(k Kind, c, owner *candidate) {
	cf := Conflict{Kind: k, Name: c.want, Winner: owner.src.ID, Loser: c.src.ID, Policy: b.opts.Policy}
	switch {
	case b.opts.Policy == PolicyError:
		cf.Resolution, cf.Error = resPolicyError, true
	case b.opts.Policy == PolicyPriority && owner.src.Priority > c.src.Priority:
		cf.Resolution = resLowerPriority
	case b.opts.Policy == PolicyPriority:
		cf.Resolution = resEqualPriority
	default:
		cf.Resolution = resDuplicateURI
	}
	b.conflicts = append(b.conflicts, cf)
}

// encodeList returns the JSON array of the items' Raw values, compacted so
// it can be written as is, even on newline-delimited stdio.
func encodeList(items []*Item) []byte {
	n := 2
	for _, it := range items {
		n += len(it.Raw) + 1
	}
	var buf bytes.Buffer
	buf.Grow(n)
	buf.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := json.Compact(&buf, it.Raw); err != nil {
			buf.Write(it.Raw) // unreachable: Raw passed json.Valid
		}
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// nestedDeeper reports whether the JSON raw nests objects and arrays more
// than limit levels deep. It scans bytes (strings skipped), so a hostile
// definition costs one pass whatever its depth.
func nestedDeeper(raw []byte, limit int) bool {
	depth, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
