package pipelines

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"
	"github.com/expr-lang/expr/vm/runtime"
)

// Limits bound what one expression may cost, so a hostile or careless
// expression cannot hang or exhaust the gateway. Zero fields take the
// defaults.
type Limits struct {
	// Nodes is the most AST nodes an expression may have (default 1000).
	Nodes int
	// Memory is the expr VM's memory budget per evaluation, in its own
	// units, roughly values allocated (default 1,000,000). The values in
	// the lists and objects that builtins such as split, concat and
	// fromJSON build are held to it too, counted apart from the VM's.
	Memory int
	// Iterations is the most predicate calls (map, filter, all, ...) one
	// evaluation may make, nested loops included (default 1,000,000).
	Iterations int
	// String is the longest string, or JSON text, an evaluation may build,
	// in bytes (default 1 MiB).
	String int
	// Items is the most items a for_each may fan out to (default 10,000).
	Items int
}

func (l Limits) withDefaults() Limits {
	if l.Nodes <= 0 {
		l.Nodes = 1000
	}
	if l.Memory <= 0 {
		l.Memory = 1_000_000
	}
	if l.Iterations <= 0 {
		l.Iterations = 1_000_000
	}
	if l.String <= 0 {
		l.String = 1 << 20
	}
	if l.Items <= 0 {
		l.Items = 10_000
	}
	return l
}

// Names the expressions see. Names starting with "__" are the engine's own.
const (
	meterName = "__m"
	tickName  = "__tick"
	tickBool  = "__tickb"
	addName   = "__add"
	catName   = "__cat"
	objName   = "__obj"
	sizedName = "__sized"  // a builtin's result, charged by its size
	sizedStr  = "__sizeds" // the same for a builtin that returns a string
)

// sizedBuiltins are expr's builtins that build a new string, list or
// object as big as their arguments, whose allocations expr's own memory
// budget does not count: the guard charges each result to the meter, so
// such a call in a loop (map(l, split(s, ""))) cannot grow without bound.
var sizedBuiltins = map[string]bool{
	"trim": true, "trimPrefix": true, "trimSuffix": true, "upper": true, "lower": true,
	"split": true, "splitAfter": true, "toBase64": true, "fromBase64": true, "fromJSON": true,
	"keys": true, "values": true, "toPairs": true, "fromPairs": true, "reverse": true, "uniq": true,
	"concat": true, "flatten": true, "sort": true, "sortBy": true, "groupBy": true, "take": true,
}

// meter counts the work of one evaluation. It lives only as long as that
// evaluation, which is why it may hold the evaluation's context.
type meter struct {
	ctx   context.Context
	n     int
	limit int
	bytes int // string bytes built by the engine's functions
	max   int // the most bytes
	// values built by builtins (items of lists and objects, see
	// sizedBuiltins), and the most
	values    int
	maxValues int
}

// size charges v, the result of a builtin of sizedBuiltins: a string by
// its bytes, a list or object by its values (every value inside, for
// fromJSON's, which are all new).
func (m *meter) size(v any, deep bool) error {
	if s, ok := v.(string); ok {
		return m.charge(len(s))
	}
	n := 0
	if deep {
		n = countValues(v, m.maxValues-m.values+1)
	} else if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map {
		n = rv.Len()
	}
	m.values += n
	if m.values > m.maxValues {
		return fmt.Errorf("%w: the expression built more than %d values in lists and objects (with functions such as split, concat or fromJSON); work on less data, or split the work over steps", ErrBudget, m.maxValues)
	}
	return nil
}

// countValues counts the values in v, lists and objects included, stopping
// once it passes limit.
func countValues(v any, limit int) int {
	n := 1
	switch x := v.(type) {
	case []any:
		for _, it := range x {
			if n > limit {
				break
			}
			n += countValues(it, limit-n)
		}
	case map[string]any:
		for _, it := range x {
			if n > limit {
				break
			}
			n += countValues(it, limit-n)
		}
	}
	return n
}

// charge counts n bytes of built strings against the budget.
func (m *meter) charge(n int) error {
	if m == nil {
		return nil
	}
	m.bytes += n
	if m.bytes > m.max {
		return fmt.Errorf("%w: the expression built more than %d bytes of text", ErrBudget, m.max)
	}
	return nil
}

func (m *meter) tick() error {
	m.n++
	if m.n > m.limit {
		return fmt.Errorf("%w: more than %d loop iterations", ErrBudget, m.limit)
	}
	if m.n&1023 == 0 && m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

var meterType = types.TypeOf(&meter{})

// engine compiles and evaluates expressions under one set of limits.
type engine struct {
	lim  Limits
	opts []expr.Option
}

func newEngine(lim Limits) *engine {
	e := &engine{lim: lim.withDefaults()}
	max := e.lim.String
	tooLong := func(n int) error {
		return fmt.Errorf("%w: a string of %d bytes is longer than the %d allowed", ErrBudget, n, max)
	}
	e.opts = []expr.Option{
		expr.MaxNodes(uint(e.lim.Nodes)),
		expr.DisableBuiltin("repeat"),
		expr.DisableBuiltin("replace"),
		expr.DisableBuiltin("join"),
		expr.DisableBuiltin("toJSON"),
		expr.DisableBuiltin("string"),
		expr.Function(tickName, func(p ...any) (any, error) {
			return p[1], p[0].(*meter).tick()
		}, new(func(*meter, any) any)),
		expr.Function(tickBool, func(p ...any) (any, error) {
			return p[1], p[0].(*meter).tick()
		}, new(func(*meter, bool) bool)),
		expr.Function(sizedName, func(p ...any) (any, error) {
			return p[1], p[0].(*meter).size(p[1], p[2].(bool))
		}, new(func(*meter, any, bool) any)),
		expr.Function(sizedStr, func(p ...any) (any, error) {
			return p[1], p[0].(*meter).size(p[1], false)
		}, new(func(*meter, string) string)),
		expr.Function(catName, func(p ...any) (any, error) {
			a, b := p[1].(string), p[2].(string)
			if len(a)+len(b) > max {
				return nil, tooLong(len(a) + len(b))
			}
			if err := p[0].(*meter).charge(len(a) + len(b)); err != nil {
				return nil, err
			}
			return a + b, nil
		}, new(func(*meter, string, string) string)),
		expr.Function(addName, func(p ...any) (out any, err error) {
			if a, ok := p[1].(string); ok {
				if b, ok := p[2].(string); ok {
					if len(a)+len(b) > max {
						return nil, tooLong(len(a) + len(b))
					}
					if err := p[0].(*meter).charge(len(a) + len(b)); err != nil {
						return nil, err
					}
				}
			}
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%v", r)
				}
			}()
			return vmAdd(p[1], p[2]), nil
		}, new(func(*meter, any, any) any)),
		expr.Function(objName, func(p ...any) (any, error) {
			return object(p[0], p[1].(string), p[2].(string), p[3].(bool))
		}, new(func(any, string, string, bool) any)),
		expr.Function("coalesce", func(p ...any) (any, error) {
			for _, v := range p {
				if v != nil && v != "" {
					return v, nil
				}
			}
			return nil, nil
		}),
	}
	e.metered(map[string]meteredFunc{
		"repeat": {func(p ...any) (any, error) {
			s, n := p[0].(string), p[1].(int)
			if n < 0 {
				return nil, fmt.Errorf("repeat: count %d is negative", n)
			}
			if n > 0 && len(s) > max/n {
				return nil, tooLong(len(s) * n)
			}
			return strings.Repeat(s, n), nil
		}, []any{new(func(string, int) string)}},
		"replace": {func(p ...any) (any, error) {
			s, old, repl := p[0].(string), p[1].(string), p[2].(string)
			n := strings.Count(s, old)
			if grow := len(repl) - len(old); grow > 0 && n > 0 && len(s)+n*grow > max {
				return nil, tooLong(len(s) + n*grow)
			}
			return strings.ReplaceAll(s, old, repl), nil
		}, []any{new(func(string, string, string) string)}},
		"join": {func(p ...any) (any, error) {
			sep := ""
			if len(p) > 1 {
				s, ok := p[1].(string)
				if !ok {
					return nil, fmt.Errorf("join: separator must be a string, got %T", p[1])
				}
				sep = s
			}
			parts, err := stringList(p[0])
			if err != nil {
				return nil, err
			}
			n := len(sep) * max0(len(parts)-1)
			for _, s := range parts {
				n += len(s)
				if n > max {
					return nil, tooLong(n)
				}
			}
			if n > max {
				return nil, tooLong(n)
			}
			return strings.Join(parts, sep), nil
		}, []any{new(func(any) string), new(func(any, string) string)}},
		"toJSON": {func(p ...any) (any, error) {
			if err := fits(p[0], max); err != nil {
				return nil, err
			}
			b, err := marshalText(p[0], "  ")
			return string(b), err
		}, []any{new(func(any) string)}},
		"json": {func(p ...any) (any, error) {
			b, err := marshalBounded(p[0], max)
			return string(b), err
		}, []any{new(func(any) string)}},
		"string": {func(p ...any) (any, error) {
			return stringify(p[0], max)
		}, []any{new(func(any) string)}},
	})
	return e
}

// meteredFunc is a function that builds strings: the name users write is
// checked with sigs, and the guard rewrites each call to a hidden twin
// that also charges the bytes it built to the evaluation's meter.
type meteredFunc struct {
	fn   func(p ...any) (any, error)
	sigs []any
}

// meteredNames are the functions the guard rewrites to their metered twins.
var meteredNames = map[string]bool{"repeat": true, "replace": true, "join": true, "toJSON": true, "json": true, "string": true}

func (e *engine) metered(fs map[string]meteredFunc) {
	meterT := reflect.TypeFor[*meter]()
	for name, f := range fs {
		if !meteredNames[name] {
			panic("pipelines: " + name + " is missing from meteredNames")
		}
		e.opts = append(e.opts, expr.Function(name, f.fn, f.sigs...))
		var twins []any
		for _, sig := range f.sigs {
			ft := reflect.TypeOf(sig).Elem()
			in := []reflect.Type{meterT}
			for i := range ft.NumIn() {
				in = append(in, ft.In(i))
			}
			out := []reflect.Type{ft.Out(0)}
			twins = append(twins, reflect.New(reflect.FuncOf(in, out, false)).Interface())
		}
		fn := f.fn
		e.opts = append(e.opts, expr.Function("__"+name, func(p ...any) (any, error) {
			out, err := fn(p[1:]...)
			if err != nil {
				return nil, err
			}
			if s, ok := out.(string); ok {
				if err := p[0].(*meter).charge(len(s)); err != nil {
					return nil, err
				}
			}
			return out, nil
		}, twins...))
	}
}

func max0(n int) int { return max(n, 0) }

func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("join: item %d is %s, not a string; map(list, string(#)) converts", i, typeOf(x))
			}
			out[i] = s
		}
		return out, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("join: want a list of strings, got %s", typeOf(v))
}

// cutMarker is the line plugins/script ends a tool's text output with
// when the output went past its cap (cutLine). stepOutput ends the text of
// every result flagged as cut (_meta["skillgate/truncated"]) with it, so
// that expressions, which see only the text, can tell; the text of an
// unflagged result ending with it (an executor older than the flag) is
// taken as cut too.
var cutMarker = regexp.MustCompile(`\n\[output truncated: (\d+) more bytes were dropped past the (\d+)-byte output cap\]$`)

// cutLine is the line cutMarker matches.
func cutLine(dropped, cap int64) string {
	return fmt.Sprintf("\n[output truncated: %d more bytes were dropped past the %d-byte output cap]", dropped, cap)
}

// cutNote says, for text s ending with cutMarker, that it was cut: JSON
// cut short is text, not the object the tool printed.
func cutNote(s string) string {
	m := cutMarker.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return fmt.Sprintf("; the tool's output was cut at the %s-byte output cap (%s more bytes dropped), so what it printed is not whole: raise limits.script_output_cap in the gateway config, or make the tool print less", m[2], m[1])
}

// object returns v, about to be read as base.name (base?.name when
// optional), or an error that says what v is when it has no fields.
func object(v any, name, base string, optional bool) (any, error) {
	switch x := v.(type) {
	case nil:
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("%s is null, so it has no field %s; write %s?.%s to get null instead", base, name, base, name)
	case string:
		return nil, fmt.Errorf("%s is text (%s), not an object, so it has no field %s%s", base, quoteCut(x, 40), name, cutNote(x))
	case []any:
		return nil, fmt.Errorf("%s is a list, not an object, so it has no field %s; index it, as in %s[0]", base, name, base)
	case bool, float64, int:
		return nil, fmt.Errorf("%s is %s, not an object, so it has no field %s", base, typeOf(v), name)
	}
	return v, nil // an object, or a value expr reads fields of itself
}

// quoteCut quotes s, cut to n runes.
func quoteCut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strconv.Quote(string(r[:n])) + "..."
	}
	return strconv.Quote(s)
}

// vmAdd is expr's own + for operands that are not both strings.
var vmAdd = runtime.Add

// program is one compiled expression.
type program struct {
	src  string
	prog *vm.Program
	typ  reflect.Type // the checked type; nil when only known at run time
	refs []string     // step ids it reads, in first-use order
	item bool         // reads item or index
	vars bool         // reads inputs or env
	// inputs.NAME reads, with their offsets
	inputReads []stepRef
}

// exprProblem is a compile error at a byte offset of the expression.
type exprProblem struct {
	off int
	msg string
}

// typeEnv is the type environment of a set of expressions, with the expr
// config made from it on first use: building that config converts every
// type in the environment, so it is made once per environment, not once
// per expression. A typeEnv is used by one goroutine at a time (the
// config's type cache is not safe for concurrent use).
type typeEnv struct {
	types types.Map
	cfg   *conf.Config
}

func newTypeEnv(m types.Map) *typeEnv { return &typeEnv{types: m} }

// config returns env's expr config under e's options.
func (e *engine) config(env *typeEnv) *conf.Config {
	if env.cfg == nil {
		cfg := conf.CreateNew()
		for _, o := range e.opts {
			o(cfg)
		}
		expr.Env(env.types)(cfg)
		for name := range cfg.Disabled {
			delete(cfg.Builtins, name)
		}
		cfg.Check()
		env.cfg = cfg
	}
	return env.cfg
}

// compile parses, checks and compiles src against env. steps, when non-nil,
// receives each steps.<id> reference with its offset, before type checking,
// so the caller can report unknown and forward references in its own words;
// a non-empty result from steps stops the compile.
func (e *engine) compile(src string, env *typeEnv, steps func(id string, off int) []exprProblem) (*program, []exprProblem) {
	cfg := e.config(env)

	tree, err := parser.ParseWithConfig(src, cfg)
	if err != nil {
		return nil, []exprProblem{fileProblem(src, err)}
	}
	p := &program{src: src}
	var probs []exprProblem
	w := &refWalker{src: src}
	ast.Walk(&tree.Node, w)
	probs = append(probs, w.probs...)
	for _, r := range w.refs {
		if !containsStr(p.refs, r.id) {
			p.refs = append(p.refs, r.id)
		}
		if steps != nil {
			probs = append(probs, steps(r.id, r.off)...)
		}
	}
	p.item, p.vars, p.inputReads = w.item, w.vars, w.inputs
	probs = append(probs, envProblems(env.types, w.env)...)
	if len(probs) > 0 {
		return nil, probs
	}
	if _, err := checker.Check(tree, cfg); err != nil {
		pr := fileProblem(src, err)
		if field, ok := strings.CutPrefix(pr.msg, "unknown field "); ok {
			field, _, _ = strings.Cut(field, ";")
			if near, ok := closest(field, fieldNames(env.types)); ok && near != field {
				pr.msg = fmt.Sprintf("unknown field %s; did you mean %s?", field, near)
			}
		}
		return nil, []exprProblem{pr}
	}
	p.typ = tree.Node.Type()
	if p.typ != nil && p.typ.Kind() == reflect.Interface {
		p.typ = nil
	}
	// Guard what expr does not budget: loops without allocation and
	// string growth. Types from the first check decide what to wrap.
	ast.Walk(&tree.Node, &guard{names: map[ast.Node]string{}})
	if _, err := checker.Check(tree, cfg); err != nil {
		return nil, []exprProblem{{msg: "internal error guarding the expression: " + err.Error()}}
	}
	if err := optimizer.Optimize(&tree.Node, cfg); err != nil {
		return nil, []exprProblem{fileProblem(src, err)}
	}
	prog, err := compiler.Compile(tree, cfg)
	if err != nil {
		return nil, []exprProblem{fileProblem(src, err)}
	}
	p.prog = prog
	return p, nil
}

// fieldNames are the field names expressions of env may read: a step's
// (outputs, status, error), the inputs schema's properties and, in a
// step with for_each, the fields of its items.
func fieldNames(env types.Map) []string {
	names := []string{"outputs", "status", "error"}
	for _, v := range []string{"inputs", "item"} {
		if in, ok := env[v].(types.Map); ok {
			for k := range in {
				if k != types.Extra && !slices.Contains(names, k) {
					names = append(names, k)
				}
			}
		}
	}
	slices.Sort(names[3:])
	return names
}

// envProblems reports the env.NAME reads of names env does not allow.
func envProblems(env types.Map, reads []stepRef) []exprProblem {
	allowed, ok := env["env"].(types.Map)
	if !ok || allowed[types.Extra] != nil {
		return nil
	}
	var probs []exprProblem
	for _, r := range reads {
		if _, ok := allowed[r.id]; ok {
			continue
		}
		names := slices.Sorted(maps.Keys(allowed))
		msg := fmt.Sprintf("env.%s is not an allowed variable; add %s to pipelines.env in the gateway config", r.id, r.id)
		if len(names) > 0 {
			msg += " (allowed now: " + strings.Join(names, ", ") + ")"
		}
		probs = append(probs, exprProblem{off: r.off, msg: msg})
	}
	return probs
}

func containsStr(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// fileProblem turns an expr error into an offset and a message.
func fileProblem(src string, err error) exprProblem {
	var fe *file.Error
	if errors.As(err, &fe) {
		return exprProblem{off: runeOffset(src, fe.From), msg: hint(fe.Message)}
	}
	return exprProblem{msg: hint(err.Error())}
}

func runeOffset(s string, runes int) int {
	n := 0
	for i := range s {
		if n == runes {
			return i
		}
		n++
	}
	return len(s)
}

// hint adds what to do to the checker's terse messages.
func hint(msg string) string {
	if h := ghaHint(msg); h != "" {
		return h
	}
	switch {
	case strings.HasPrefix(msg, "invalid operation: || (mismatched types") || strings.HasPrefix(msg, "invalid operation: or (mismatched types"):
		return msg + `; || is for true and false: for a default write a ?? b (b when a is null) or coalesce(a, b) (also when a is "")`
	case msg == "unknown name item" || msg == "unknown name index":
		return msg + "; item and index exist only in a step with for_each"
	case strings.HasPrefix(msg, "unknown name "):
		return msg + "; expressions see inputs, steps, env, and item/index inside for_each"
	case strings.HasPrefix(msg, "unknown field "):
		return msg + "; check the spelling against the inputs schema or the step (outputs, status, error)"
	}
	return msg
}

type stepRef struct {
	id  string
	off int
}

// refWalker finds steps.<id> references and the names an expression reads.
type refWalker struct {
	src    string
	refs   []stepRef
	env    []stepRef // env.NAME reads
	inputs []stepRef // inputs.NAME reads
	probs  []exprProblem
	item   bool
	vars   bool
}

func (w *refWalker) Visit(n *ast.Node) {
	switch v := (*n).(type) {
	case *ast.MemberNode:
		id, ok := v.Node.(*ast.IdentifierNode)
		if ok && id.Value == "env" {
			if prop, ok := v.Property.(*ast.StringNode); ok {
				w.env = append(w.env, stepRef{id: prop.Value, off: runeOffset(w.src, prop.Location().From)})
			}
			return
		}
		if ok && id.Value == "inputs" {
			if prop, ok := v.Property.(*ast.StringNode); ok {
				w.inputs = append(w.inputs, stepRef{id: prop.Value, off: runeOffset(w.src, prop.Location().From)})
			}
			return
		}
		if !ok || id.Value != "steps" {
			return
		}
		prop, ok := v.Property.(*ast.StringNode)
		if !ok {
			w.probs = append(w.probs, exprProblem{off: runeOffset(w.src, v.Location().From),
				msg: "steps must be indexed by a step id written out, as steps.fetch or steps[\"fetch\"]"})
			return
		}
		id.Value = "steps" // mark as seen
		w.refs = append(w.refs, stepRef{id: prop.Value, off: runeOffset(w.src, prop.Location().From)})
	case *ast.IdentifierNode:
		switch {
		case strings.HasPrefix(v.Value, "__"):
			w.probs = append(w.probs, exprProblem{off: runeOffset(w.src, v.Location().From),
				msg: "names starting with __ are reserved"})
		case v.Value == "item" || v.Value == "index":
			w.item = true
		case v.Value == "inputs" || v.Value == "env":
			w.vars = true
		}
	}
}

// guard rewrites a checked tree: every predicate body counts an iteration,
// every + that may join strings checks the length, and every .field of a
// value of unknown type (a step's outputs) says what the value is when it
// is not an object.
type guard struct {
	names map[ast.Node]string // how each member access is written
}

func (g *guard) Visit(n *ast.Node) {
	meterIdent := func() ast.Node { return &ast.IdentifierNode{Value: meterName} }
	switch v := (*n).(type) {
	case *ast.MemberNode:
		prop, ok := v.Property.(*ast.StringNode)
		if !ok || v.Method {
			return
		}
		base, ok := g.names[v.Node]
		if !ok {
			base = v.Node.String()
		}
		dot := "."
		if v.Optional {
			dot = "?."
		}
		g.names[v] = base + dot + prop.Value
		if t := v.Node.Type(); t != nil && t.Kind() != reflect.Interface {
			return
		}
		// The base is checked by a call that passes it through, so the
		// member access, its ?. and the chain it ends stay expr's own.
		v.Node = &ast.CallNode{Callee: &ast.IdentifierNode{Value: objName},
			Arguments: []ast.Node{v.Node, &ast.StringNode{Value: prop.Value}, &ast.StringNode{Value: base}, &ast.BoolNode{Value: v.Optional}}}
	case *ast.PredicateNode:
		name := tickName
		if t := v.Node.Type(); t != nil && t.Kind() == reflect.Bool {
			name = tickBool
		}
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: name}, Arguments: []ast.Node{meterIdent(), v.Node}}
		call.SetLocation(v.Node.Location())
		v.Node = call
	case *ast.BuiltinNode:
		if !sizedBuiltins[v.Name] {
			return
		}
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: sizedStr}, Arguments: []ast.Node{meterIdent(), v}}
		if !isKind(v.Type(), reflect.String) {
			call = &ast.CallNode{Callee: &ast.IdentifierNode{Value: sizedName}, Arguments: []ast.Node{meterIdent(), v, &ast.BoolNode{Value: v.Name == "fromJSON"}}}
		}
		ast.Patch(n, call)
	case *ast.CallNode:
		id, ok := v.Callee.(*ast.IdentifierNode)
		if !ok || !meteredNames[id.Value] {
			return
		}
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: "__" + id.Value},
			Arguments: append([]ast.Node{meterIdent()}, v.Arguments...)}
		ast.Patch(n, call)
	case *ast.BinaryNode:
		if v.Operator != "+" {
			return
		}
		lt, rt := v.Left.Type(), v.Right.Type()
		if isNumeric(lt) && isNumeric(rt) || isOther(lt) || isOther(rt) {
			return
		}
		name := addName
		if isKind(lt, reflect.String) && isKind(rt, reflect.String) {
			name = catName
		}
		ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: name},
			Arguments: []ast.Node{meterIdent(), v.Left, v.Right}})
	}
}

func isKind(t reflect.Type, k reflect.Kind) bool { return t != nil && t.Kind() == k }

func isNumeric(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// isOther reports a known type + can never turn into a string, such as a
// time or a duration.
func isOther(t reflect.Type) bool {
	return t != nil && t.Kind() != reflect.Interface && t.Kind() != reflect.String && !isNumeric(t)
}

// eval runs p with env (which it may modify) under the engine's budgets.
func (e *engine) eval(ctx context.Context, p *program, env map[string]any) (any, error) {
	env[meterName] = &meter{ctx: ctx, limit: e.lim.Iterations, max: e.lim.String, maxValues: e.lim.Memory}
	m := vm.VM{MemoryBudget: uint(e.lim.Memory)}
	out, err := m.Run(p.prog, env)
	if err != nil {
		var fe *file.Error
		msg := err.Error()
		if errors.As(err, &fe) {
			msg = fe.Message
		}
		if errors.Is(err, ErrBudget) || strings.Contains(msg, "memory budget exceeded") {
			if !errors.Is(err, ErrBudget) {
				msg = ErrBudget.Error() + ": " + msg
			}
			return nil, &evalError{src: p.src, msg: msg, err: ErrBudget}
		}
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return nil, cerr
		}
		return nil, &evalError{src: p.src, msg: msg}
	}
	return out, nil
}

// evalError is an expression that failed at run time.
type evalError struct {
	src string
	msg string
	err error
}

func (e *evalError) Error() string { return "${{ " + e.src + " }}: " + e.msg }
func (e *evalError) Unwrap() error { return e.err }

// fits reports an error when v's JSON text would be longer than max bytes,
// without building it.
func fits(v any, max int) error {
	if n := jsonSize(reflect.ValueOf(v), max+1); n > max {
		return fmt.Errorf("%w: the value's JSON text is longer than the %d bytes allowed", ErrBudget, max)
	}
	return nil
}

// jsonSize estimates the JSON length of v, stopping once it passes limit.
func jsonSize(v reflect.Value, limit int) int {
	if !v.IsValid() {
		return 4
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 4
		}
		return jsonSize(v.Elem(), limit)
	case reflect.String:
		return len(v.String()) + 2
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Len()*4/3 + 4
		}
		n := 2
		for i := 0; i < v.Len() && n <= limit; i++ {
			n += jsonSize(v.Index(i), limit-n) + 1
		}
		return n
	case reflect.Map:
		n := 2
		it := v.MapRange()
		for it.Next() && n <= limit {
			n += jsonSize(it.Key(), limit-n) + jsonSize(it.Value(), limit-n) + 2
		}
		return n
	case reflect.Struct:
		n := 2
		for i := 0; i < v.NumField() && n <= limit; i++ {
			if v.Type().Field(i).IsExported() {
				n += len(v.Type().Field(i).Name) + 4 + jsonSize(v.Field(i), limit-n)
			}
		}
		return n
	}
	return 24
}

// marshalBounded is marshalText that refuses results longer than max.
func marshalBounded(v any, max int) ([]byte, error) {
	if err := fits(v, max); err != nil {
		return nil, err
	}
	return marshalText(v, "")
}

// marshalText is json.Marshal (indented by indent, when set) without the
// escaping of <, > and & meant for HTML: pipeline results are read as text,
// where "a -> b" must not become "a \u003e b".
func marshalText(v any, indent string) ([]byte, error) {
	if indent == "" {
		b, err := json.Marshal(v)
		if err != nil || !bytes.Contains(b, []byte(`\u00`)) {
			return b, err // nothing escaped: the common case, without an Encoder
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// stringify is what interpolation and string() make of a value: strings
// as they are, nil as "", numbers in their shortest form, the rest as JSON.
func stringify(v any, max int) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case fmt.Stringer:
		return v.String(), nil
	}
	b, err := marshalBounded(v, max)
	return string(b), err
}

// typeOf names a value's JSON type for messages.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, float64, int32, float32, uint, uint64:
		return "a number"
	case map[string]any:
		return "an object"
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}
