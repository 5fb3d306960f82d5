// Package graph checks dependency graphs whose nodes are names: services
// that depend on services (checked by the config validator, with file and
// line, and again by the service manager on its own specs) and disclosure
// bundles that include bundles.
package graph

import "slices"

// Cycle returns one cycle of the graph, or nil when it has none. Nodes are
// visited in the order of nodes and the edges of n in the order deps(n)
// returns them, so the answer is the same for the same input; deps may name
// nodes missing from nodes, which are visited when reached. The cycle is
// the path from its first node back to it, the first node repeated at the
// end: [a b a] for a -> b -> a, [a a] for a node that depends on itself.
func Cycle(nodes []string, deps func(string) []string) []string {
	const (
		unseen = iota
		open   // on the current path
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = open
		path = append(path, n)
		for _, d := range deps(n) {
			switch state[d] {
			case open:
				return append(slices.Clone(path[slices.Index(path, d):]), d)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for _, n := range nodes {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}
