package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// relProblem says what is wrong with a path that must name a file inside a
// skill folder, or returns "". It is lexical; openInSkill also refuses
// symlinks that lead out.
func relProblem(rel string) string {
	switch {
	case rel == "" || rel == ".":
		return "empty; name a file relative to the skill folder, like references/guide.md"
	case strings.ContainsRune(rel, 0):
		return "holds a NUL byte"
	case strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || (len(rel) > 1 && rel[1] == ':'):
		return fmt.Sprintf("%q is absolute; name a file relative to the skill folder", rel)
	case strings.Contains(rel, `\`):
		return fmt.Sprintf("%q holds a backslash; separate folders with /", rel)
	}
	for _, seg := range strings.Split(rel, "/") {
		switch {
		case seg == "..":
			return fmt.Sprintf("%q climbs out with ..; name a file inside the skill folder", rel)
		case seg != "" && seg != "." && seg[0] == '.':
			return fmt.Sprintf("%q names a hidden file or folder, which skills do not serve", rel)
		}
	}
	if c := path.Clean(rel); c == "." || c == "" {
		return "empty; name a file relative to the skill folder, like references/guide.md"
	}
	return ""
}

// cleanRel checks rel and returns it cleaned (slash-separated, no "./").
func cleanRel(rel string) (string, error) {
	if msg := relProblem(rel); msg != "" {
		return "", fmt.Errorf("%w: %s", ErrBadPath, msg)
	}
	return path.Clean(rel), nil
}

// openInSkill opens rel inside dir through an os.Root, which refuses any
// path or symlink that resolves outside dir (so /skills/a cannot reach
// /skills/ab, and a symlink swapped in after a check is still refused).
// Symlinks that stay inside the folder work.
func openInSkill(dir, rel string) (*os.File, fs.FileInfo, error) {
	clean, err := cleanRel(rel)
	if err != nil {
		return nil, nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open the skill folder: %v", errMsg(err))
	}
	defer r.Close()
	f, err := r.Open(clean)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, clean)
		case strings.Contains(err.Error(), "escapes"):
			return nil, nil, fmt.Errorf("%w: %q leads out of the skill folder (a symlink?)", ErrBadPath, clean)
		}
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrBadPath, clean, errMsg(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrBadPath, clean, errMsg(err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, fmt.Errorf("%w: %s is a folder; name a file in it", ErrBadPath, clean)
		}
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrBadPath, clean)
	}
	return f, fi, nil
}

// File is a file of a skill as ReadFile returns it.
type File struct {
	// Path is the file's path in the skill folder, cleaned.
	Path string `json:"path"`
	// Size is the file's full size.
	Size int64 `json:"size"`
	// Offset is where Data starts in the file.
	Offset int64 `json:"offset,omitempty"`
	// Data is at most the library's FileCap bytes of the file.
	Data []byte `json:"-"`
	// Truncated is set when the file goes on past Data.
	Truncated bool `json:"truncated,omitempty"`
	// Binary is set when Data is not text: it holds a NUL byte, or it is
	// not valid UTF-8 and the file's name does not say text. Data is then
	// the file's bytes from Offset, as many as fit.
	Binary bool `json:"binary,omitempty"`
	// Invalid is set for text (by its name, such as a Latin-1 .md) that is
	// not valid UTF-8: Data holds U+FFFD in place of each invalid byte.
	Invalid bool `json:"invalid,omitempty"`
	// End is the offset just past the file's bytes in Data: where the next
	// page starts when Truncated. Text pages start and end on whole
	// characters, so Offset may be past the offset asked for.
	End int64 `json:"end,omitempty"`
}

// ReadFile reads a file of the skill: rel is relative to the skill folder
// (references/guide.md, scripts/fill.py, SKILL.md). Paths that are
// absolute, climb out with .., name hidden files, or lead out of the
// folder through a symlink are refused with ErrBadPath. At most FileCap
// bytes are returned from offset on; File.Truncated says there is more.
func (l *Library) ReadFile(sk *Skill, rel string, offset int64) (*File, error) {
	return l.readFile(sk, rel, offset, l.opts.FileCap)
}

// readFile is ReadFile returning at most limit bytes.
func (l *Library) readFile(sk *Skill, rel string, offset, limit int64) (*File, error) {
	f, fi, err := openInSkill(sk.Dir, rel)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", sk.ID, err)
	}
	defer f.Close()
	clean, _ := cleanRel(rel)
	out := &File{Path: clean, Size: fi.Size(), Offset: offset}
	if offset < 0 || (offset > 0 && offset >= fi.Size()) {
		return nil, fmt.Errorf("skill %s: %w: offset %d is outside %s (%d bytes)", sk.ID, ErrBadPath, offset, clean, fi.Size())
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, clean, err)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("skill %s: read %s: %v", sk.ID, clean, errMsg(err))
	}
	if int64(len(data)) > limit {
		data = data[:limit]
		out.Truncated = true
	}
	// A page may start or end inside a UTF-8 sequence (an offset chosen
	// by hand, a cut): that alone does not make text binary.
	lead, tail := 0, 0
	if offset > 0 {
		lead = continuation(data)
	}
	if out.Truncated {
		tail = partialRune(data[lead:])
	}
	core := data[lead : len(data)-tail]
	nul := strings.IndexByte(string(data[:min(len(data), 8000)]), 0) >= 0
	valid := utf8.Valid(core)
	if !valid {
		// Not UTF-8 anyway: its first bytes are characters of their own.
		lead, core = 0, data[:len(data)-tail]
	}
	switch {
	case nul || !valid && !isTextType(clean):
		out.Binary = true
	default:
		// Text, from the first whole character to the last.
		data, out.Offset = core, offset+int64(lead)
		if !valid {
			out.Invalid = true
			data = []byte(strings.ToValidUTF8(string(core), string(utf8.RuneError)))
		}
	}
	out.End = out.Offset + int64(len(data))
	if out.Invalid {
		out.End = out.Offset + int64(len(core))
	}
	out.Data = data
	return out, nil
}

// continuation counts the UTF-8 continuation bytes data starts with (at
// most 3: a character's tail, when a read starts inside it).
func continuation(data []byte) int {
	n := 0
	for n < len(data) && n < utf8.UTFMax-1 && !utf8.RuneStart(data[n]) {
		n++
	}
	return n
}

// partialRune counts the bytes at the end of data that start a UTF-8
// sequence data does not finish (a read cut inside a character).
func partialRune(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if utf8.FullRune(data[i:]) {
				return 0
			}
			return len(data) - i
		}
	}
	return 0
}

// isTextType reports whether a file's name says it holds text (Markdown,
// source, JSON, YAML...): such a file that is not valid UTF-8 (Latin-1,
// say) is still read as text.
func isTextType(p string) bool {
	m := mimeOf(p)
	if strings.HasPrefix(m, "text/") {
		return true
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".json", ".yaml", ".yml", ".toml", ".xml", ".js", ".ts", ".csv", ".tsv", ".txt", ".ini", ".cfg", ".rb", ".go", ".rs", ".java":
		return true
	}
	return false
}
