package skills

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/oneline"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Skill is one skill of a snapshot. It is immutable: a change on disk
// yields a new Skill in a new Snapshot.
type Skill struct {
	// ID addresses the skill: its name, or team/name for a skill nested
	// one level (skills/<team>/<skill>/SKILL.md). It is the <skill-path>
	// of its skill:// URIs and what activation (skill:ID) names.
	ID string
	// Team is the folder the skill is nested in, or "".
	Team string
	// Meta is the parsed frontmatter.
	Meta Meta
	// Dir is the skill folder's absolute path.
	Dir string
	// Root is the skills folder the skill was found in.
	Root string
	// Source says where Root comes from: "dir" or a git repository's
	// "git <url>@<commit>".
	Source string
	// Scripts are the files under scripts/, relative to scripts/, then
	// the files elsewhere in the skill folder that the frontmatter's
	// scripts: names (ooxml/scripts/pack.py), relative to the skill
	// folder: each as run_skill_script takes it.
	Scripts []string
	// ToolDirs are the folders under tools/ holding a tool.yaml: the
	// gateway loads them as script/wasm sources of this skill.
	ToolDirs []string
	// PipelinesDir is the skill's pipelines/ folder, or "".
	PipelinesDir string
	// Problems are what is wrong with the skill while it is served:
	// warnings, and errors about parts of it that are not (tools of a
	// reserved namespace).
	Problems []Problem

	hooks         hookSet
	nScripts      int       // Scripts[:nScripts] are under scripts/
	parseProblems []Problem // the frontmatter's, kept while SKILL.md is unchanged
	mdPath        string
	mdRel         string // mdPath as problems name it
	md            stamp
	card          string
	keywords      []term // stemmed words of ID, tags, description
}

// Namespace is the namespace of a skill's own tools and pipelines (and its
// prompt's name): its ID with "/" written "_".
func Namespace(id string) string { return strings.ReplaceAll(id, "/", "_") }

// Name is the skill's frontmatter name.
func (s *Skill) Name() string { return s.Meta.Name }

// Card is the skill's one-line summary (about 30 tokens): ID, the start of
// its description, and its tags.
func (s *Skill) Card() string { return s.card }

// HasHooks reports whether the skill has hooks of its own.
func (s *Skill) HasHooks() bool { return !s.hooks.empty() }

// URI is the skill:// URI of the skill's SKILL.md (MCP skills extension).
func (s *Skill) URI() string { return "skill://" + s.ID + "/" + FileName }

// Policy returns the execution policy of script (its key in the
// frontmatter's scripts: a path under scripts/ for a file there, else
// the path in the skill folder), its own entry merged over the skill's
// execution and d.
func (s *Skill) Policy(script string, d Policy) Policy {
	p := s.Meta.Scripts[script]
	return p.merge(s.Meta.Execution).merge(d)
}

// cardChars is roughly how long a card's description may be: a card is
// meant to cost about 30 tokens.
const cardChars = 120

// triggers start the clause of a description that says when to use the
// skill ("Use when Claude needs to fill a PDF form"): a card keeps it
// when it must cut, since it is what a model picks the skill by.
var triggers = []string{"use when", "use this when", "use it when", "use this skill when", "when claude", "when the user", "when you need", "use for", "use to"}

func makeCard(s *Skill) string {
	d := strings.Join(strings.Fields(s.Meta.Description), " ")
	if utf8.RuneCountInString(d) > cardChars {
		d = fitDescription(d)
	}
	var b strings.Builder
	b.WriteString(s.ID)
	b.WriteString(": ")
	b.WriteString(d)
	if len(s.Meta.Tags) > 0 {
		b.WriteString(" [")
		b.WriteString(strings.Join(s.Meta.Tags[:min(len(s.Meta.Tags), 4)], ", "))
		b.WriteString("]")
	}
	return b.String()
}

// fitDescription cuts a long description to about cardChars, keeping
// its trigger clause (see triggers) when it has one past the start.
func fitDescription(d string) string {
	lower := strings.ToLower(d)
	at := -1
	for _, t := range triggers {
		if i := strings.Index(lower, t); i > 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return cutText(d, cardChars)
	}
	lead, trigger := strings.TrimRight(d[:at], " ,;.—-"), d[at:]
	tr := cutText(trigger, cardChars*2/3)
	room := cardChars - utf8.RuneCountInString(tr) - 2
	if utf8.RuneCountInString(lead) <= room {
		return lead + ". " + tr
	}
	return cutText(lead, max(room, 24)) + " " + tr
}

// cutText cuts text to about n characters, at a sentence, else a word,
// never inside a character, and marks the cut with "…".
func cutText(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	head := strings.TrimSuffix(oneline.Cut(text, n), "…")
	cut := strings.LastIndexAny(head, ".;")
	if cut < len(head)/2 {
		cut = strings.LastIndexByte(head, ' ')
	}
	if cut < len(head)/2 {
		cut = len(head)
	}
	return strings.TrimRight(head[:cut], " ,;.") + "…"
}

// Snapshot is the library at one moment: immutable, safe to share, swapped
// atomically when the tree changes.
type Snapshot struct {
	skills   []*Skill
	byID     map[string]*Skill
	byName   map[string][]*Skill
	byPath   map[string]*Skill // by SKILL.md path
	problems []Problem
	stamps   []stampedPath
	hooks    hookSet // the global hooks
	gen      uint64
}

// Skills returns the skills, sorted by ID. The slice is shared: do not
// modify it.
func (s *Snapshot) Skills() []*Skill { return s.skills }

// Problems returns what is wrong in the tree: broken skills (not served)
// and warnings about served ones.
func (s *Snapshot) Problems() []Problem { return s.problems }

// Generation counts the snapshots the library has published.
func (s *Snapshot) Generation() uint64 { return s.gen }

// Lookup finds a skill by ID, or by name when exactly one skill has it.
func (s *Snapshot) Lookup(name string) (*Skill, error) { return s.lookup(name, nil) }

// lookup is Lookup among the skills ok accepts (nil: all).
func (s *Snapshot) lookup(name string, ok func(*Skill) bool) (*Skill, error) {
	if sk := s.byID[name]; sk != nil && (ok == nil || ok(sk)) {
		return sk, nil
	}
	c := s.byName[name]
	if ok != nil {
		c = slices.DeleteFunc(slices.Clone(c), func(sk *Skill) bool { return !ok(sk) })
	}
	switch len(c) {
	case 0:
		if p, ok := s.broken(name); ok {
			return nil, fmt.Errorf("%w: %q is not served: %s; fix its SKILL.md (the gateway picks the fix up by itself)", ErrUnknownSkill, name, p)
		}
		return nil, fmt.Errorf("%w: %q; find_skills lists the skills", ErrUnknownSkill, name)
	case 1:
		return c[0], nil
	default:
		ids := make([]string, len(c))
		for i, sk := range c {
			ids[i] = sk.ID
		}
		return nil, fmt.Errorf("%w: %q names %d skills; use one of %s", ErrAmbiguousSkill, name, len(c), strings.Join(ids, ", "))
	}
}

// broken finds the problem that keeps a skill named name (by its folder,
// or team/folder) from being served, if any.
func (s *Snapshot) broken(name string) (Problem, bool) {
	want := "/" + strings.Trim(name, "/") + "/" + FileName
	for _, p := range s.problems {
		if p.Warning {
			continue
		}
		if path := "/" + filepath.ToSlash(p.Path); strings.HasSuffix(path, want) {
			return p, true
		}
	}
	return Problem{}, false
}

// installed reports whether the skill name, as sk's requires names it,
// is in the snapshot (a team's skill may name a sibling by its bare name).
func (s *Snapshot) installed(sk *Skill, name string) bool {
	if _, err := s.Lookup(name); err == nil {
		return true
	}
	return sk.Team != "" && s.byID[sk.Team+"/"+name] != nil
}

func newSnapshot(skills []*Skill, problems []Problem, stamps []stampedPath, global hookSet, gen uint64) *Snapshot {
	slices.SortFunc(skills, func(a, b *Skill) int { return cmp.Compare(a.ID, b.ID) })
	s := &Snapshot{skills: skills, byID: make(map[string]*Skill, len(skills)), byName: map[string][]*Skill{},
		byPath:   make(map[string]*Skill, len(skills)),
		problems: problems, stamps: stamps, hooks: global, gen: gen}
	for _, sk := range skills {
		s.byID[sk.ID] = sk
		s.byName[sk.Meta.Name] = append(s.byName[sk.Meta.Name], sk)
		s.byPath[sk.mdPath] = sk
	}
	return s
}
