package skills

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// body is a SKILL.md's cached body and outline.
type body struct {
	st       stamp
	text     string
	sections []Section
	cut      int64 // the SKILL.md's size when the body was cut at DefaultBodyCap, else 0
}

// Section is one heading of a skill's body.
type Section struct {
	// Title is the heading's text.
	Title string `json:"title"`
	// Level is 1 for #, 2 for ##, ...
	Level int `json:"level"`
	// start and end are byte offsets of the section in the body, heading
	// included, up to the next heading of the same or a higher level.
	start, end int
}

// Body returns the skill's SKILL.md without its frontmatter. It is read on
// first use and cached; each call revalidates the cache with one stat of
// (mtime, size).
func (l *Library) Body(sk *Skill) (string, []Section, error) {
	b, err := l.body(sk)
	if err != nil {
		return "", nil, err
	}
	return b.text, b.sections, nil
}

// Section returns one heading's section of the skill's body: the heading
// and everything up to the next heading of the same or a higher level.
// title matches a heading's text without regard to case, or a "#"-less
// slug of it; a unique prefix is enough.
func (l *Library) Section(sk *Skill, title string) (string, error) {
	b, err := l.body(sk)
	if err != nil {
		return "", err
	}
	want := normTitle(title)
	var hits []Section
	for _, s := range b.sections {
		if normTitle(s.Title) == want {
			return b.text[s.start:s.end], nil
		}
		if strings.HasPrefix(normTitle(s.Title), want) {
			hits = append(hits, s)
		}
	}
	if len(hits) == 1 {
		return b.text[hits[0].start:hits[0].end], nil
	}
	cut := ""
	if b.cut > 0 {
		cut = fmt.Sprintf(" (its SKILL.md is %d bytes and only the first %d MiB of the body is served, so later sections are not: read_skill_file with path %s pages through the whole file)",
			b.cut, DefaultBodyCap>>20, FileName)
	}
	if len(b.sections) == 0 {
		return "", fmt.Errorf("%w %q: skill %s has no headings%s; load it whole", ErrUnknownSection, title, sk.ID, cut)
	}
	const maxTitles = 40
	titles := make([]string, 0, min(len(b.sections), maxTitles))
	for _, s := range b.sections[:min(len(b.sections), maxTitles)] {
		titles = append(titles, s.Title)
	}
	more := ""
	if n := len(b.sections) - len(titles); n > 0 {
		more = fmt.Sprintf("; and %d more", n)
	}
	return "", fmt.Errorf("%w %q in skill %s%s; its sections are: %s%s", ErrUnknownSection, title, sk.ID, cut, strings.Join(titles, "; "), more)
}

func normTitle(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "#")))
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '_':
			return '-'
		case r == '`' || r == '*':
			return -1
		}
		return r
	}, s)
}

func (l *Library) body(sk *Skill) (*body, error) {
	fi, err := os.Stat(sk.mdPath)
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, FileName, errMsg(err))
	}
	st := stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size(), ino: inode(fi), ok: true}
	if v, ok := l.bodies.Load(sk.mdPath); ok {
		if b := v.(*body); b.st == st {
			return b, nil
		}
	}
	// Read through the jail: a SKILL.md that is (or became) a symlink
	// leading out of the skill folder is refused, like any other file.
	f, fi, err := openInSkill(sk.Dir, FileName)
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %s", sk.ID, FileName, jailMsg(err))
	}
	defer f.Close()
	st = stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size(), ino: inode(fi), ok: true}
	raw, err := io.ReadAll(io.LimitReader(f, DefaultBodyCap+MaxFrontmatter+1))
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, FileName, errMsg(err))
	}
	_, off, err := ParseFrontmatter(raw)
	if hasErrors(err) {
		return nil, fmt.Errorf("skill %s: %s changed and its frontmatter is broken now: %w", sk.ID, FileName, err)
	}
	text := string(raw[off:])
	var cut int64
	if len(text) > DefaultBodyCap {
		end := DefaultBodyCap
		for end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
		cut = fi.Size()
		text = text[:end] + fmt.Sprintf("\n\n[the body is cut at %d MiB of its %d bytes; read_skill_file with path %s pages through the whole file]\n", DefaultBodyCap>>20, cut, FileName)
	}
	text = strings.TrimLeft(text, "\r\n")
	b := &body{st: st, text: text, sections: outline(text), cut: cut}
	l.bodies.Store(sk.mdPath, b)
	return b, nil
}

// outline finds the Markdown headings of text (ATX "#" headings outside
// fenced code blocks).
func outline(text string) []Section {
	var out []Section
	fence := ""
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimRight(text[off:next], "\r\n")
		trim := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			fence = trim[:3]
		case len(line) > 0 && line[0] == '#':
			lvl := len(line) - len(strings.TrimLeft(line, "#"))
			rest := line[lvl:]
			if lvl <= 6 && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "#"))
				if title != "" {
					out = append(out, Section{Title: title, Level: lvl, start: off})
				}
			}
		}
		off = next
	}
	for i := range out {
		out[i].end = len(text)
		for j := i + 1; j < len(out); j++ {
			if out[j].Level <= out[i].Level {
				out[i].end = out[j].start
				break
			}
		}
	}
	return out
}
