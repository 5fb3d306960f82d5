package graph

import (
	"slices"
	"testing"
)

func TestCycle(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes []string
		edges map[string][]string
		want  []string
	}{
		{"empty", nil, nil, nil},
		{"chain", []string{"a", "b", "c"}, map[string][]string{"a": {"b"}, "b": {"c"}}, nil},
		{"diamond", []string{"a", "b", "c", "d"}, map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}}, nil},
		{"two nodes", []string{"a", "b"}, map[string][]string{"a": {"b"}, "b": {"a"}}, []string{"a", "b", "a"}},
		{"self", []string{"a"}, map[string][]string{"a": {"a"}}, []string{"a", "a"}},
		{"cycle below a tail", []string{"x", "a", "b", "c"}, map[string][]string{"x": {"a"}, "a": {"b"}, "b": {"c"}, "c": {"b"}}, []string{"b", "c", "b"}},
		{"first node in order wins", []string{"b", "a"}, map[string][]string{"a": {"b"}, "b": {"a"}}, []string{"b", "a", "b"}},
		{"node reached but not listed", []string{"a"}, map[string][]string{"a": {"z"}, "z": {"a"}}, []string{"a", "z", "a"}},
		{"done nodes are not revisited", []string{"a", "b", "c"}, map[string][]string{"a": {"c"}, "b": {"c"}, "c": nil}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := map[string]int{}
			got := Cycle(c.nodes, func(n string) []string { calls[n]++; return c.edges[n] })
			if !slices.Equal(got, c.want) {
				t.Errorf("Cycle = %v, want %v", got, c.want)
			}
			for n, k := range calls {
				if k > 1 {
					t.Errorf("deps(%q) asked %d times; each node is expanded once", n, k)
				}
			}
		})
	}
}
