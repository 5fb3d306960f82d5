package skills

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/internal/suggest"
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
	shadowed      []string // folders whose URIs are team skills' (Snapshot.shadow)
	keywords      []term   // stemmed words of ID, tags, description
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
func (s *Skill) URI() string { return s.FileURI(FileName) }

// FileURI is the skill:// URI of the file at rel (slash-separated,
// relative to the skill folder): skill://<ID>/<rel>, each path segment
// escaped as a URI path segment ("my file.md" is my%20file.md) so that
// a client can send it back as it got it.
func (s *Skill) FileURI(rel string) string {
	return "skill://" + escapePath(s.ID) + "/" + escapePath(rel)
}

// escapePath escapes each "/"-separated segment of p for a URI path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

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
// its trigger clause (see triggers) when it has one past the start. What
// comes before the clause (what the skill does) stays whole when it
// leaves the clause room for its start, and the clause is cut at its
// end; a longer lead is cut at its end instead, before a clause of up to
// half a card kept whole.
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
	nLead, nTrigger := utf8.RuneCountInString(lead), utf8.RuneCountInString(trigger)
	room := max(cardChars-nLead-2, min(nTrigger, cardChars/2))
	tr := cutText(trigger, room)
	if rest := cardChars - utf8.RuneCountInString(tr) - 2; nLead <= rest {
		return lead + ". " + tr
	}
	return cutText(lead, max(cardChars-utf8.RuneCountInString(tr)-1, 24)) + " " + tr
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
	hooks    hookSet   // the global hooks
	held     heldNames // names of broken skills (scanner.hold)
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
	if err := s.heldError(s.held.ids[name], name); err != nil {
		return nil, err
	}
	c := s.byName[name]
	if ok != nil {
		c = slices.DeleteFunc(slices.Clone(c), func(sk *Skill) bool { return !ok(sk) })
	}
	switch len(c) {
	case 0:
		if err := s.heldError(s.held.folders[strings.Trim(name, "/")], name); err != nil {
			return nil, err
		}
		if p, ok := s.broken(name); ok {
			return nil, brokenError(name, p)
		}
		return nil, fmt.Errorf("%w: %q; %s", ErrUnknownSkill, name, s.meant(name, ok))
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

// meant says which skill among those ok accepts (nil: all) name
// probably means, for the error of an unknown skill: the skill whose
// folder it is (served under its frontmatter name), the folder whose
// skill.md is not read (lower case), or the nearest ID or name (a typo,
// the wrong case); else where the skills are listed.
func (s *Snapshot) meant(name string, ok func(*Skill) bool) string {
	want := strings.Trim(name, "/")
	var known []string
	for _, sk := range s.skills {
		if ok != nil && !ok(sk) {
			continue
		}
		folder := filepath.Base(sk.Dir)
		if sk.Team != "" {
			folder = sk.Team + "/" + folder
		}
		if folder == want && folder != sk.ID {
			return fmt.Sprintf("%s is the folder of skill %s (its SKILL.md names it %s); use %s", folder, sk.ID, sk.Meta.Name, sk.ID)
		}
		known = append(known, sk.ID)
		if sk.Meta.Name != sk.ID {
			known = append(known, sk.Meta.Name)
		}
	}
	for _, p := range s.problems {
		path := filepath.ToSlash(p.Path)
		if p.Warning && strings.EqualFold(pathpkg.Base(path), FileName) && pathpkg.Base(path) != FileName && strings.HasSuffix("/"+pathpkg.Dir(path), "/"+want) {
			return fmt.Sprintf("%s/%s is not read: a skill's file is %s, in upper case; rename it (the gateway picks the skill up by itself)", want, pathpkg.Base(path), FileName)
		}
	}
	if c, found := suggest.Closest(name, known); found {
		return fmt.Sprintf("did you mean %q? find_skills lists the skills", c)
	}
	return "find_skills lists the skills"
}

// brokenError is the error of a lookup of name, a skill that p keeps
// from being served: ErrUnknownSkill and ErrBrokenSkill.
func brokenError(name string, p Problem) error {
	return &brokenSkillError{fmt.Sprintf("%s: %q is not served: %s; fix its SKILL.md (the gateway picks the fix up by itself)", ErrUnknownSkill, name, p)}
}

// brokenSkillError is the error of brokenError.
type brokenSkillError struct{ msg string }

func (e *brokenSkillError) Error() string { return e.msg }

func (e *brokenSkillError) Is(target error) bool {
	return target == ErrUnknownSkill || target == ErrBrokenSkill
}

// heldError is the error of a lookup of name, held by the broken skill
// whose SKILL.md is at md (as problems name it; "" for none): its first
// error. It is nil when md is "" or has no error.
func (s *Snapshot) heldError(md, name string) error {
	if md == "" {
		return nil
	}
	for _, p := range s.problems {
		if p.Path == md && !p.Warning {
			return brokenError(name, p)
		}
	}
	return nil
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
	byRel := make(map[string]*Skill, len(skills))
	for _, sk := range skills {
		s.byID[sk.ID] = sk
		s.byName[sk.Meta.Name] = append(s.byName[sk.Meta.Name], sk)
		s.byPath[sk.mdPath] = sk
		byRel[sk.mdRel] = sk
		sk.Problems = placed(sk, sk.Problems)
	}
	s.problems = slices.Clone(s.problems)
	for i, p := range s.problems {
		if sk := byRel[p.Path]; sk != nil {
			s.problems[i] = placed(sk, []Problem{p})[0]
		}
	}
	s.shadow()
	return s
}

// placed gives the problems of sk about a frontmatter key that lack a
// line (the scan's: a name that differs from the folder) the key's line
// and column in its SKILL.md. It copies ps before it changes one.
func placed(sk *Skill, ps []Problem) []Problem {
	copied := false
	for i, p := range ps {
		if p.Field == "" || p.Line > 0 || p.Path != sk.mdRel {
			continue
		}
		line, col := sk.Meta.Pos(p.Field)
		if line == 0 {
			continue
		}
		if !copied {
			ps, copied = slices.Clone(ps), true
		}
		ps[i].Line, ps[i].Column = line, col
	}
	return ps
}

// shadow finds the files of a skill whose skill:// URIs are a team
// skill's: skill newteam's folder tskill/ and the team skill
// newteam/tskill (from another skills folder) would both be
// skill://newteam/tskill/.... resources/read serves the team skill's, so
// the skill's folder is left out of what it lists (skills/list,
// completion) and a warning on its SKILL.md says what to rename. One stat
// per team skill whose team is also a skill's ID.
func (s *Snapshot) shadow() {
	for _, sk := range s.skills {
		host := s.byID[sk.Team]
		if sk.Team == "" || host == nil {
			continue
		}
		name := sk.Meta.Name
		if _, err := os.Lstat(filepath.Join(host.Dir, name)); err != nil {
			continue
		}
		host.shadowed = append(host.shadowed, name)
		p := Problem{Path: host.mdRel, Warning: true, Msg: fmt.Sprintf(
			"its %s/ has the skill:// URIs of the team skill %s (%s): resources/read serves the team skill's, so skills/list leaves this skill's %s/ out (read_skill_file still reads it); rename the folder %s/ or the team folder %s",
			name, sk.ID, sk.mdRel, name, name, sk.Team)}
		host.Problems = append(slices.Clip(host.Problems), p)
		s.problems = append(slices.Clip(s.problems), p)
	}
}

// listed reports whether the file at rel in sk's folder is listed under
// sk's skill:// URIs: not when a team skill's URIs shadow it (see
// Snapshot.shadow).
func (sk *Skill) listed(rel string) bool {
	for _, name := range sk.shadowed {
		if rel == name || strings.HasPrefix(rel, name+"/") {
			return false
		}
	}
	return true
}

// Unserved reads the skill folder of md (a SKILL.md, absolute; rel is how
// problems name it) when its frontmatter has errors that keep the skill
// from being served, as far as the frontmatter parses, so that a
// validator reports the skill's other problems with those errors rather
// than after they are fixed. The Skill has the keys that parsed in its
// Meta and its Scripts listed as a scan lists them; it is not part of
// any snapshot. probs are what a scan would report besides the
// frontmatter's errors (a name that differs from the folder). ok is
// false when md's frontmatter has no errors (a skill left out for
// another reason) or cannot be read.
func Unserved(md, rel string) (sk *Skill, probs []Problem, ok bool) {
	dir := filepath.Dir(md)
	meta, fm, parsed := readMeta(dir, rel)
	if parsed || len(fm) == 0 || strings.HasPrefix(fm[0].Msg, "cannot read") {
		return nil, nil, false
	}
	sk = &Skill{ID: meta.Name, Meta: meta, Dir: dir, mdPath: md, mdRel: rel}
	sk.Scripts = listFiles(dir, "scripts", maxScripts)
	sk.nScripts = len(sk.Scripts)
	sk.Scripts = append(sk.Scripts, declaredScripts(sk, sk.Scripts)...)
	if folder := filepath.Base(dir); nameRE().MatchString(meta.Name) && meta.Name != folder {
		line, col := meta.Pos("name")
		probs = append(probs, Problem{Path: rel, Line: line, Column: col, Field: "name", Warning: true,
			Msg: fmt.Sprintf("%q differs from its folder %q; the skill would be served as %s", meta.Name, folder, meta.Name)})
	}
	return sk, probs, true
}
