package pipelines

import (
	"strings"

	"github.com/expr-lang/expr/types"
	"gopkg.in/yaml.v3"
)

// forEach compiles step s's for_each, v, and the type of its items.
func (c *pcomp) forEach(s *Step, v *yaml.Node, f string, check func(string, int) []exprProblem) {
	d := c.d
	s.forEach = c.value(v, f, c.envFor(s, false), check)
	if s.forEach == nil {
		return
	}
	s.ForEach = strings.Trim(s.forEach.String(), `"`)
	switch s.forEach.kind {
	case tInterp:
		d.fail(v, f, "for_each must be a list: a single ${{ }} or a YAML list, not text")
	case tConst:
		if _, ok := s.forEach.val.([]any); !ok {
			d.fail(v, f, "for_each must be a list, got %s", typeOf(s.forEach.val))
		}
	case tExpr:
		if t := s.forEach.prog.typ; t != nil && jsonTypeName(t) != "array" {
			d.errs = append(d.errs, &Error{Pos: d.at(v), Field: f, Expr: s.forEach.prog.src, Msg: "for_each must be a list, but this is " + jsonTypeName(t)})
		}
	}
	s.itemType = c.itemType(s.forEach)
}

// itemType is the type of the items of for_each t: the merged type of
// a literal list's elements, or the items schema of inputs.a.b; any
// when it is only known at run time.
func (c *pcomp) itemType(t *tmpl) types.Type {
	switch {
	case t == nil:
		return types.Any
	case t.kind == tConst:
		l, _ := t.val.([]any)
		var out types.Type
		for i, v := range l {
			if i == 0 {
				out = valueType(v)
			} else {
				out = mergeTypes(out, valueType(v))
			}
		}
		if out == nil {
			return types.Any
		}
		return out
	case t.kind == tExpr && t.prog != nil:
		path := strings.Split(strings.TrimSpace(t.prog.src), ".")
		if len(path) < 2 || path[0] != "inputs" {
			return types.Any
		}
		var schema any = c.p.inputs
		for _, k := range path[1:] {
			schema = asMap(asMap(schema)["properties"])[k]
		}
		if asMap(schema)["type"] != "array" {
			return types.Any
		}
		return schemaType(asMap(schema)["items"])
	}
	return types.Any
}

// valueType is the type of the YAML value v: objects are strict, so a
// misspelt field is an error.
func valueType(v any) types.Type {
	switch v := v.(type) {
	case string:
		return types.String
	case int:
		return types.Int
	case float64:
		return types.Float64
	case bool:
		return types.Bool
	case map[string]any:
		m := types.Map{}
		for k, x := range v {
			m[k] = valueType(x)
		}
		return m
	}
	return types.Any
}

// mergeTypes is a type both a and b fit: objects have the fields of
// either, with any where they differ; anything else that differs is any.
func mergeTypes(a, b types.Type) types.Type {
	ma, okA := a.(types.Map)
	mb, okB := b.(types.Map)
	if okA && okB {
		m := types.Map{}
		for k, t := range ma {
			m[k] = t
		}
		for k, t := range mb {
			if have, ok := m[k]; ok {
				m[k] = mergeTypes(have, t)
			} else {
				m[k] = t
			}
		}
		return m
	}
	if okA || okB || !a.Equal(b) || !b.Equal(a) {
		return types.Any
	}
	return a
}

// itemEnv is the type environment of the expressions of step s, which
// has for_each: item has the type of its items. Steps whose items are of
// no known type share one environment.
func (c *pcomp) itemEnv(s *Step) *typeEnv {
	if s.itemType == nil || s.itemType == types.Any {
		return c.envFor(s, true)
	}
	base := c.envFor(s, true)
	m := make(types.Map, len(base.types))
	for k, t := range base.types {
		m[k] = t
	}
	m["item"] = s.itemType
	return newTypeEnv(m)
}
