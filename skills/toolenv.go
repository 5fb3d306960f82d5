package skills

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/skillgate/skillgate/plugins/toolspec"
)

// ToolEnvProblems are the variables the tool of the tool folder dir (its
// tool.yaml loaded as tool) asks for under env: or secrets: that r
// refuses, one error each, at the entry's line and column in the
// tool.yaml, which path names (as problems show it). The gateway does not
// serve such a tool; the message says which setting changes that.
func (r EnvRule) ToolEnvProblems(dir, path string, tool *toolspec.Tool) []Problem {
	var out []Problem
	var pos map[string][2]int
	for _, list := range []struct {
		key   string
		names []string
	}{{"env", tool.Env}, {"secrets", tool.Secrets}} {
		for i, n := range list.names {
			why := r.Refuses(n)
			if why == "" {
				continue
			}
			if pos == nil {
				pos = listPositions(filepath.Join(dir, toolspec.FileName), "env", "secrets")
			}
			field := list.key + "[" + strconv.Itoa(i) + "]"
			at := pos[field]
			out = append(out, Problem{Path: path, Line: at[0], Column: at[1], Field: field, Msg: fmt.Sprintf(
				"the tool asks for the variable %s, which the gateway does not pass to skills: %s; the tool is not served: add %s to skills.env_allow in the gateway's config, or take it out of %s:",
				n, why, n, list.key)})
		}
	}
	return out
}

// listPositions reads the YAML mapping of file and returns the line and
// column of each item of its sequences under keys, by "key[i]". A file
// that does not read or parse gives none.
func listPositions(file string, keys ...string) map[string][2]int {
	out := map[string][2]int{}
	f, err := os.Open(file)
	if err != nil {
		return out
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, toolspec.MaxFileSize))
	if err != nil {
		return out
	}
	var doc yaml.Node
	if yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc) != nil || len(doc.Content) != 1 {
		return out
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if !slices.Contains(keys, k.Value) || v.Kind != yaml.SequenceNode {
			continue
		}
		for j, item := range v.Content {
			out[k.Value+"["+strconv.Itoa(j)+"]"] = [2]int{item.Line, item.Column}
		}
	}
	return out
}
