package skills

import (
	"fmt"
	"slices"
)

// Activation is what activating a skill brings: the skill itself and the
// skills it requires (transitively), and everything they require.
type Activation struct {
	// Skills are the skill IDs, the activated one first.
	Skills []string `json:"skills"`
	// Servers, Services and Tools are the union of their requires.
	Servers  []string `json:"servers,omitempty"`
	Services []string `json:"services,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	// ToolDirs and PipelineDirs are the skills' own tools/ folders (with a
	// tool.yaml) and pipelines/ folders, which the gateway loads as sources
	// of their skill.
	ToolDirs     map[string][]string `json:"tool_dirs,omitempty"`
	PipelineDirs map[string]string   `json:"pipeline_dirs,omitempty"`
	// Missing are required skills that are not installed.
	Missing []string `json:"missing,omitempty"`
}

// Targets are the activation targets of a, in the gateway's syntax
// (skill:ID, server:NAME, tool names and globs). Services are not
// targets: the gateway starts them.
func (a Activation) Targets() []string {
	var out []string
	for _, s := range a.Skills {
		out = append(out, "skill:"+s)
	}
	for _, s := range a.Servers {
		out = append(out, "server:"+s)
	}
	return append(out, a.Tools...)
}

// Activation resolves what activating the skill named name brings. A cycle
// of requires is fine (each skill comes once); a required skill that is
// not installed is listed in Missing.
func (s *Snapshot) Activation(name string) (Activation, error) {
	sk, err := s.Lookup(name)
	if err != nil {
		return Activation{}, err
	}
	var a Activation
	seen := map[string]bool{}
	add := func(list *[]string, items []string) {
		for _, it := range items {
			if !slices.Contains(*list, it) {
				*list = append(*list, it)
			}
		}
	}
	queue := []*Skill{sk}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if seen[cur.ID] {
			continue
		}
		seen[cur.ID] = true
		a.Skills = append(a.Skills, cur.ID)
		r := cur.Meta.Requires
		add(&a.Servers, r.Servers)
		add(&a.Services, r.Services)
		add(&a.Tools, r.Tools)
		if len(cur.ToolDirs) > 0 {
			if a.ToolDirs == nil {
				a.ToolDirs = map[string][]string{}
			}
			a.ToolDirs[cur.ID] = cur.ToolDirs
		}
		if cur.PipelinesDir != "" {
			if a.PipelineDirs == nil {
				a.PipelineDirs = map[string]string{}
			}
			a.PipelineDirs[cur.ID] = cur.PipelinesDir
		}
		for _, req := range r.Skills {
			dep, err := s.Lookup(req)
			if err != nil {
				if cur.Team != "" {
					// A team's skill may name a sibling by its bare name.
					if d := s.byID[cur.Team+"/"+req]; d != nil {
						queue = append(queue, d)
						continue
					}
				}
				if !slices.Contains(a.Missing, req) {
					a.Missing = append(a.Missing, req)
				}
				continue
			}
			queue = append(queue, dep)
		}
	}
	return a, nil
}

// Check reports requires that name nothing installed: skills missing from
// the snapshot, and servers and services not in known (nil skips that
// check). The gateway calls it with its config's names.
func (s *Snapshot) Check(servers, services []string) []Problem {
	var out []Problem
	for _, sk := range s.skills {
		for _, m := range sk.Meta.Requires.Skills {
			if !s.installed(sk, m) {
				out = append(out, Problem{Path: sk.mdRel, Field: "requires.skills", Warning: true, Msg: fmt.Sprintf("skill %s is not installed", m)})
			}
		}
		if servers != nil {
			for _, x := range sk.Meta.Requires.Servers {
				if !slices.Contains(servers, x) {
					out = append(out, Problem{Path: sk.mdRel, Field: "requires.servers", Warning: true, Msg: fmt.Sprintf("server %s is not in the config", x)})
				}
			}
		}
		if services != nil {
			for _, x := range sk.Meta.Requires.Services {
				if !slices.Contains(services, x) {
					out = append(out, Problem{Path: sk.mdRel, Field: "requires.services", Warning: true, Msg: fmt.Sprintf("service %s is not in the config", x)})
				}
			}
		}
	}
	return out
}
