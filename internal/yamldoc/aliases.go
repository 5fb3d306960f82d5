package yamldoc

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// MaxAliasValues bounds the values aliases and << merges may bring into a
// document, the work of walking one whose aliases expand exponentially.
// Values written out are not counted: yaml.v3 has read them already, and
// walking them is as cheap.
const MaxAliasValues = 100_000

// Aliases returns the problems with n's aliases: every alias that refers
// to a value it is part of (walking it would never end), and the first
// alias past which aliases bring more than MaxAliasValues values into n,
// counting what the aliases inside an alias's value bring too. Fields are
// paths from n, such as "servers.a.args[1]"; a << merge adds nothing to
// the path. A loader reports these and walks n only when there are none.
func Aliases(n *yaml.Node) []Problem {
	c := &aliasCheck{size: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	c.walk(n, "")
	return c.probs
}

type aliasCheck struct {
	size  map[*yaml.Node]int  // values a node stands for, aliases expanded, at most MaxAliasValues+1
	open  map[*yaml.Node]bool // anchored nodes being walked or sized: an alias to one is a loop
	spent int                 // values the aliases walked so far bring
	probs []Problem
}

func (c *aliasCheck) add(n *yaml.Node, field, format string, args ...any) {
	c.probs = append(c.probs, Problem{Line: n.Line, Col: n.Column, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// walk visits the values written in n and what their aliases bring; false
// means the budget is spent and the walk is over.
func (c *aliasCheck) walk(n *yaml.Node, field string) bool {
	if n.Kind == yaml.AliasNode {
		switch {
		case n.Alias == nil: // a hand-made node; yaml.v3 refuses an unknown anchor
			return true
		case c.open[n.Alias]:
			c.add(n, field, "alias *%s refers to itself", n.Value)
			return true
		}
		if c.spent += c.expanded(n.Alias); c.spent > MaxAliasValues {
			c.add(n, field, "aliases expand to more than %d values here; use fewer aliases, or alias smaller parts", MaxAliasValues)
			return false
		}
		return true
	}
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if !c.walk(k, field) {
				return false
			}
			merge := k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
			switch {
			case merge && v.Kind == yaml.SequenceNode: // <<: [*a, *b]
				if !c.walkAll(v, field) {
					return false
				}
			case merge || k.Kind != yaml.ScalarNode:
				if !c.walk(v, field) {
					return false
				}
			default:
				if !c.walk(v, join(field, k.Value)) {
					return false
				}
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if !c.walk(e, fmt.Sprintf("%s[%d]", field, i)) {
				return false
			}
		}
	case yaml.DocumentNode:
		return c.walkAll(n, field)
	}
	return true
}

// walkAll walks the values of n, all at field.
func (c *aliasCheck) walkAll(n *yaml.Node, field string) bool {
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	for _, e := range n.Content {
		if !c.walk(e, field) {
			return false
		}
	}
	return true
}

// expanded returns how many values n stands for with its aliases
// expanded, at most MaxAliasValues+1. An alias that loops counts as one
// value: walk reports it where it is written.
func (c *aliasCheck) expanded(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil || c.open[n.Alias] {
			return 1
		}
		return c.expanded(n.Alias)
	}
	if s, ok := c.size[n]; ok {
		return s
	}
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	s := 1
	for _, e := range n.Content {
		if s += c.expanded(e); s > MaxAliasValues {
			s = MaxAliasValues + 1
			break
		}
	}
	c.size[n] = s
	return s
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
