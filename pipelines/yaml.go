package pipelines

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks yaml.Node trees strictly and keeps every problem. It
// follows aliases without counting: the loader walks only documents whose
// aliases do not loop and bring a bounded number of values (see
// yamldoc.Aliases).
type decoder struct {
	file string
	errs []*Error
}

func (d *decoder) at(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{Pos: d.at(n), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases; nil means give up.
func (d *decoder) resolve(n *yaml.Node, field string) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 {
			d.fail(n, field, "alias *%s refers to itself", n.Value)
			return nil
		}
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return d.resolve(n.Content[0], field)
	}
	return n
}

type pair struct{ k, v *yaml.Node }

// mapping returns n's pairs in file order, or nil with an error when n is
// not a mapping.
func (d *decoder) mapping(n *yaml.Node, field string) ([]pair, bool) {
	if n = d.resolve(n, field); n == nil {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return nil, true
		}
		d.fail(n, field, "want a mapping of keys to values, got %s", kindName(n))
		return nil, false
	}
	var out []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k, field, "a key must be a plain string, not %s", kindName(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.fail(k, field, "<< merge keys are not supported in pipelines; write the keys out")
			continue
		}
		if prev := seen[k.Value]; prev != nil {
			d.fail(k, join(field, k.Value), "duplicate key; it is already set at line %d, remove one", prev.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k, v})
	}
	return out, true
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func (d *decoder) str(n *yaml.Node, field string) (string, bool) {
	if n = d.resolve(n, field); n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.fail(n, field, "want a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) integer(n *yaml.Node, field string, min int) (int, bool) {
	s, ok := d.str(n, field)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < min {
		d.fail(n, field, "%q is not a whole number of at least %d", s, min)
		return 0, false
	}
	return i, true
}

func (d *decoder) duration(n *yaml.Node, field string) (time.Duration, bool) {
	s, ok := d.str(n, field)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			d.fail(n, field, "%q has no unit; write it as %ss or %sms", s, s, s)
		} else {
			d.fail(n, field, "%q is not a positive duration; write it as 500ms, 10s or 1m30s", s)
		}
		return 0, false
	}
	return v, true
}

// strings reads one string or a list of strings.
func (d *decoder) strings(n *yaml.Node, field string) ([]string, []*yaml.Node, bool) {
	if n = d.resolve(n, field); n == nil {
		return nil, nil, false
	}
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		return []string{n.Value}, []*yaml.Node{n}, true
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, field, "want a step id or a list of them, got %s", kindName(n))
		return nil, nil, false
	}
	var out []string
	var nodes []*yaml.Node
	ok := true
	for i, c := range n.Content {
		s, sok := d.str(c, fmt.Sprintf("%s[%d]", field, i))
		if sok {
			out = append(out, s)
			nodes = append(nodes, d.resolve(c, field))
		}
		ok = ok && sok
	}
	return out, nodes, ok
}

// value converts n to the Go form of its JSON value: map[string]any,
// []any, string, int, float64, bool or nil.
func (d *decoder) value(n *yaml.Node, field string) (any, bool) {
	if n = d.resolve(n, field); n == nil {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		ps, ok := d.mapping(n, field)
		m := make(map[string]any, len(ps))
		for _, p := range ps {
			v, vok := d.value(p.v, join(field, p.k.Value))
			m[p.k.Value] = v
			ok = ok && vok
		}
		return m, ok
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, vok := d.value(c, fmt.Sprintf("%s[%d]", field, i))
			l[i] = v
			ok = ok && vok
		}
		return l, ok
	}
	return scalarValue(n), true
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		return strings.EqualFold(n.Value, "true")
	case "!!int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return int(i)
		}
	case "!!float":
		switch strings.ToLower(n.Value) {
		case ".inf", "+.inf":
			return math.Inf(1)
		case "-.inf":
			return math.Inf(-1)
		case ".nan":
			return math.NaN()
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
			return f
		}
	}
	return n.Value
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if isNull(n) {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}
