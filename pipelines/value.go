package pipelines

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// tkind is the shape of a value written in a pipeline.
type tkind int

const (
	tConst  tkind = iota // no expression anywhere inside
	tExpr                // a lone ${{ }}: keeps the expression's type
	tInterp              // text with ${{ }} inside: always a string
	tList
	tMap
)

// tmpl is a value that may hold expressions: a step's with, for_each, or
// the pipeline's outputs. Constant parts are shared between runs and are
// never modified.
type tmpl struct {
	kind  tkind
	val   any
	prog  *program
	parts []tpart
	items []*tmpl
	keys  []string
	pos   Pos // where an expression or interpolation is written
}

// placedError is the error of a value's expression at run time, with
// where it is in the value (such as "with.text" or "outputs.items[2]")
// and in its file.
type placedError struct {
	path string
	pos  Pos
	err  error
}

func (e *placedError) Error() string {
	if p := e.pos.String(); p != "" {
		return fmt.Sprintf("%s (%s): %v", e.path, p, e.err)
	}
	return fmt.Sprintf("%s: %v", e.path, e.err)
}

func (e *placedError) Unwrap() error { return e.err }

// place puts err, from the evaluation of the value at key, under key: the
// path of a placedError grows, any other error is prefixed.
func place(key string, err error) error {
	var pe *placedError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", key, err)
	}
	switch {
	case pe.path == "":
		pe.path = key
	case strings.HasPrefix(pe.path, "["):
		pe.path = key + pe.path
	default:
		pe.path = key + "." + pe.path
	}
	return pe
}

type tpart struct {
	lit  string
	prog *program
}

func (t *tmpl) eval(ctx context.Context, e *engine, env map[string]any) (any, error) {
	switch t.kind {
	case tConst:
		return t.val, nil
	case tExpr:
		v, err := e.eval(ctx, t.prog, env)
		if err != nil {
			return nil, &placedError{pos: t.pos, err: err}
		}
		return v, nil
	case tInterp:
		var b strings.Builder
		for _, p := range t.parts {
			if p.prog == nil {
				b.WriteString(p.lit)
				continue
			}
			v, err := e.eval(ctx, p.prog, env)
			if err != nil {
				return nil, &placedError{pos: t.pos, err: err}
			}
			s, err := stringify(v, e.lim.String)
			if err != nil {
				return nil, &placedError{pos: t.pos, err: err}
			}
			if b.Len()+len(s) > e.lim.String {
				return nil, &placedError{pos: t.pos, err: fmt.Errorf("%w: the text built from %q is longer than the %d bytes allowed", ErrBudget, p.prog.src, e.lim.String)}
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case tList:
		out := make([]any, len(t.items))
		for i, it := range t.items {
			v, err := it.eval(ctx, e, env)
			if err != nil {
				return nil, place(fmt.Sprintf("[%d]", i), err)
			}
			out[i] = v
		}
		return out, nil
	case tMap:
		out := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			v, err := t.items[i].eval(ctx, e, env)
			if err != nil {
				return nil, place(k, err)
			}
			out[k] = v
		}
		return out, nil
	}
	panic("pipelines: unknown value kind")
}

// programs calls f on every expression inside t.
func (t *tmpl) programs(f func(*program)) {
	if t == nil {
		return
	}
	switch t.kind {
	case tExpr:
		f(t.prog)
	case tInterp:
		for _, p := range t.parts {
			if p.prog != nil {
				f(p.prog)
			}
		}
	case tList, tMap:
		for _, it := range t.items {
			it.programs(f)
		}
	}
}

// static reports whether t reads nothing but inputs, env and constants,
// so a dry run can resolve it before any step runs.
func (t *tmpl) static() bool {
	ok := true
	t.programs(func(p *program) { ok = ok && len(p.refs) == 0 && !p.item })
	return ok
}

// String writes t back in pipeline syntax, for plans and graphs.
func (t *tmpl) String() string {
	switch t.kind {
	case tConst:
		s, _ := stringify(t.val, 1<<20)
		if _, isStr := t.val.(string); isStr {
			return fmt.Sprintf("%q", s)
		}
		return s
	case tExpr:
		return "${{ " + t.prog.src + " }}"
	case tInterp:
		var b strings.Builder
		for _, p := range t.parts {
			if p.prog == nil {
				b.WriteString(p.lit)
			} else {
				b.WriteString("${{ " + p.prog.src + " }}")
			}
		}
		return fmt.Sprintf("%q", b.String())
	case tList:
		parts := make([]string, len(t.items))
		for i, it := range t.items {
			parts[i] = it.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case tMap:
		parts := make([]string, len(t.keys))
		for i, k := range t.keys {
			parts[i] = k + ": " + t.items[i].String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "?"
}
