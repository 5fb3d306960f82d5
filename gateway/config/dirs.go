package config

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// missingDirs warns about each folder of tools:, pipelines:, skills: and
// plugins: that is not there. The gateway starts without it (and serves
// what it holds once it is made, or at the next reload), so it is a
// warning, not an error; it names the absolute path looked for, since a
// relative one is resolved against the config file's folder, not the
// working folder.
func (c *Config) missingDirs() []*Error {
	var out []*Error
	for _, d := range []struct {
		field string
		dirs  []string
	}{
		{"tools.dirs", c.Tools.Dirs}, {"pipelines.dirs", c.Pipelines.Dirs},
		{"skills.dirs", c.Skills.Dirs}, {"skills.hooks_dirs", c.Skills.HooksDirs}, {"plugins.dirs", c.Plugins.Dirs},
	} {
		for i, dir := range d.dirs {
			if dir == "" {
				continue // an error of its own
			}
			fi, err := os.Stat(dir)
			if err == nil && fi.IsDir() {
				continue
			}
			f := fmt.Sprintf("%s[%d]", d.field, i)
			what := "does not exist"
			if err == nil {
				what = "is not a folder"
			}
			out = append(out, &Error{Pos: c.where(f), Field: f,
				Msg: fmt.Sprintf("%s %s%s; create it, or fix the path", absDir(dir), what, c.relativeTo())})
		}
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return out
}

// relativeTo says what the relative folders of c were resolved against.
func (c *Config) relativeTo() string {
	if c.Source == "" || strings.HasPrefix(c.Source, "<") {
		return " (a relative folder is resolved against the working folder)"
	}
	return fmt.Sprintf(" (a relative folder is resolved against the config file's folder, %s)", absDir(filepath.Dir(c.Source)))
}

// absDir returns dir as an absolute path, or as it is when there is none.
func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// MissingDir reports whether dir, a folder of the config's tools:,
// pipelines:, skills: or plugins: (as Parse resolved it), is not a
// folder here: Warnings reports it, and a check of what the folders hold
// can leave it out.
func MissingDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err != nil || !fi.IsDir()
}
