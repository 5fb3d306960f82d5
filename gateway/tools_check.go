package gateway

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills"
)

// ToolFolderProblems checks the tool folders of cfg's tools dirs as the
// gateway loads them (tool.yaml, the files it names, the services it
// requires against cfg's), without building or running anything, and
// returns each problem at its file:line. A folder whose name an earlier
// dir already has is skipped, as the gateway skips it; missing dirs are
// the config's warnings. `skillgate validate` prints the problems: such a
// folder is served as invalid, its tool not at all.
func ToolFolderProblems(cfg *config.Config) []skills.Problem {
	// Never nil: with no services, every required name is unknown.
	services := append([]string{}, slices.Sorted(maps.Keys(cfg.Services))...)
	seen := map[string]bool{}
	var out []skills.Problem
	for _, dir := range cfg.Tools.Dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || seen[name] {
				continue
			}
			folder := filepath.Join(dir, name)
			file := filepath.Join(folder, toolspec.FileName)
			if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			seen[name] = true
			if _, err := toolspec.LoadFor(folder, services); err != nil {
				out = append(out, toolProblems(file, file, err)...)
			}
		}
	}
	return out
}
