package skills

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// body is a SKILL.md's cached body and outline.
type body struct {
	st       stamp
	text     string
	sections []Section
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
	titles := make([]string, len(b.sections))
	for i, s := range b.sections {
		titles[i] = s.Title
	}
	if len(titles) == 0 {
		return "", fmt.Errorf("%w %q: skill %s has no headings; load it whole", ErrUnknownSection, title, sk.ID)
	}
	return "", fmt.Errorf("%w %q in skill %s; its sections are: %s", ErrUnknownSection, title, sk.ID, strings.Join(titles, "; "))
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
	var st stamp
	fi, err := os.Stat(sk.mdPath)
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, FileName, errMsg(err))
	}
	st = stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size(), ok: true}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(s.Ino)
	}
	if v, ok := l.bodies.Load(sk.mdPath); ok {
		if b := v.(*body); b.st == st {
			return b, nil
		}
	}
	f, err := os.Open(sk.mdPath)
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, FileName, errMsg(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, DefaultBodyCap+MaxFrontmatter+1))
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, FileName, errMsg(err))
	}
	_, off, err := ParseFrontmatter(raw)
	if hasErrors(err) {
		return nil, fmt.Errorf("skill %s: %s changed and its frontmatter is broken now: %w", sk.ID, FileName, err)
	}
	text := string(raw[off:])
	if len(text) > DefaultBodyCap {
		text = text[:DefaultBodyCap] + fmt.Sprintf("\n\n[body cut at %d bytes]\n", DefaultBodyCap)
	}
	text = strings.TrimLeft(text, "\r\n")
	b := &body{st: st, text: text, sections: outline(text)}
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
