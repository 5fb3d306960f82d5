package pipelines

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/names"

	"github.com/expr-lang/expr/types"
	"gopkg.in/yaml.v3"
)

var (
	idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`) })
)

var (
	pipelineKeys = []string{"name", "description", "inputs", "steps", "outputs", "timeout", "concurrency", "requires"}
	stepKeys     = []string{"id", "tool", "with", "if", "for_each", "concurrency", "needs", "retry", "timeout", "on_error"}
	retryKeys    = []string{"max", "backoff"}
)

// maxRetries bounds retry.max so a typo cannot keep a step busy for hours.
const maxRetries = 20

// pcomp compiles one pipeline document.
type pcomp struct {
	d     *decoder
	eng   *engine
	tools func(string) bool
	// toolList lists the known tools, for suggestions
	toolList func() []string
	pending  func(string) string // Loader.ToolPending
	p        *Pipeline
	// pre-scanned on_error of each step, to know fallback steps early
	fallbackOf map[string][]string // fallback id -> steps naming it
	stepsT     types.Map           // the type of steps, once all are known
	envs       [2]*typeEnv         // without and with item (see envFor)
}

// compileDoc compiles the pipeline in mapping n; name is the default name.
func (l *Loader) compileDoc(d *decoder, eng *engine, n *yaml.Node, name string, tools func(string) bool, toolList func() []string) *Pipeline {
	before := len(d.errs)
	c := &pcomp{d: d, eng: eng, tools: tools, toolList: toolList, pending: l.ToolPending, fallbackOf: map[string][]string{}}
	p := &Pipeline{Name: name, Pos: d.at(n), eng: eng, byID: map[string]*Step{}, env: map[string]any{}}
	c.p = p
	for k, v := range l.Env {
		p.env[k] = v
	}
	pairs, ok := d.mapping(n, "")
	if !ok {
		return nil
	}
	var stepsNode, outputsNode *yaml.Node
	nameSet := false
	for _, kv := range pairs {
		k := kv.k.Value
		if strings.HasPrefix(k, "x-") {
			continue
		}
		switch k {
		case "name":
			if s, ok := d.str(kv.v, k); ok {
				p.Name, nameSet = s, true
			}
		case "description":
			if s, ok := d.str(kv.v, k); ok {
				p.Description = s
			}
		case "inputs":
			v, ok := d.value(kv.v, k)
			if !ok {
				break
			}
			m, isMap := v.(map[string]any)
			if v != nil && !isMap {
				d.fail(kv.v, k, "want a JSON Schema of the arguments, such as {type: object, properties: {...}}")
				break
			}
			if t, has := m["type"]; has && t != "object" {
				d.fail(kv.v, k, "the inputs schema must have type: object, since tool arguments are an object")
				break
			}
			if m != nil {
				p.schema = d.inputsSchema(kv.v, m)
			}
			p.inputs = m
		case "steps":
			stepsNode = kv.v
		case "outputs":
			outputsNode = kv.v
		case "timeout":
			if t, ok := d.duration(kv.v, k); ok {
				p.Timeout = t
			}
		case "concurrency":
			if i, ok := d.integer(kv.v, k, 1); ok {
				p.Concurrency = i
			}
		case "requires":
			reqs, nodes, _ := d.strings(kv.v, k)
			for i, n := range reqs {
				if !names.Valid(n) {
					d.fail(nodes[i], k, "%q is not a service name", n)
					continue
				}
				if l.Services != nil {
					if known := l.Services(); !slices.Contains(known, n) {
						d.fail(nodes[i], fmt.Sprintf("%s[%d]", k, i), "unknown service %q; %s", n, serviceHint(n, known))
						continue
					}
				}
				p.Requires = append(p.Requires, n)
			}
		default:
			d.fail(kv.k, k, "%s", unknownKey(k, kv.v, false, pipelineKeys))
		}
	}
	if !names.Valid(p.Name) {
		at := n
		if nameSet {
			at = valueOf(pairs, "name")
		}
		d.fail(at, "name", "%q is not a valid pipeline name; use 1 to 64 letters, digits, _ or -", p.Name)
	}
	if p.inputs == nil {
		p.inputs = map[string]any{"type": "object"}
	}
	if _, has := p.inputs["type"]; !has {
		p.inputs["type"] = "object"
	}
	p.inputsType = schemaType(p.inputs)
	p.ToolName = l.toolName(p.Name)
	if strings.TrimSpace(p.Description) == "" {
		// A client picks tools by their descriptions; script tools must
		// have one.
		p.Warnings = append(p.Warnings, &Error{Pos: d.at(n), Field: "description", Warning: true,
			Msg: fmt.Sprintf("pipeline %s has no description; add description: with what it does and when to use it, which clients read to choose the tool", p.Name)})
	}

	if stepsNode == nil {
		d.fail(n, "steps", "a pipeline needs steps; add a list of steps, each with an id and a tool")
		return nil
	}
	c.steps(stepsNode)
	if on := d.resolve(outputsNode, "outputs"); on != nil && on.Kind != yaml.MappingNode {
		d.fail(on, "outputs", "want a mapping of output names to values, since a tool's structured result is an object")
		outputsNode = nil
	}
	if outputsNode != nil {
		p.outputs = c.value(outputsNode, "outputs", c.envFor(nil, false), c.refChecker(nil, map[string]bool{}))
	}
	if len(d.errs) > before {
		return nil
	}
	c.finish()
	if len(d.errs) > before { // problems only the whole graph shows
		return nil
	}
	return p
}

func valueOf(pairs []pair, key string) *yaml.Node {
	for _, p := range pairs {
		if p.k.Value == key {
			return p.v
		}
	}
	return nil
}

// steps compiles the step list in two passes: ids and on_error first, so
// references in any order get precise messages, then everything else.
func (c *pcomp) steps(n *yaml.Node) {
	d := c.d
	if n = d.resolve(n, "steps"); n == nil {
		return
	}
	if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		d.fail(n, "steps", "the list of steps is empty; add at least one step, with an id and a tool")
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, "steps", "want a list of steps, each with an id and a tool, got %s", kindName(n))
		return
	}
	type raw struct {
		node  *yaml.Node
		pairs []pair
	}
	raws := make([]raw, len(n.Content))
	for i, sn := range n.Content {
		field := fmt.Sprintf("steps[%d]", i)
		sn = d.resolve(sn, field)
		if sn == nil {
			continue
		}
		ps, ok := d.mapping(sn, field)
		if !ok {
			continue
		}
		raws[i] = raw{sn, ps}
		s := &Step{index: i, Pos: d.at(sn), OnError: "fail", Concurrency: 4}
		if v := valueOf(ps, "id"); v == nil {
			d.fail(sn, field, "a step needs an id; add id: <name> (letters, digits and _)")
		} else if id, ok := d.str(v, field+".id"); ok {
			switch {
			case !idRE().MatchString(id):
				d.fail(v, field+".id", "%q is not a valid step id; use letters, digits and _, starting with a letter, so expressions can write steps.%s", id, validID(id))
			case c.p.byID[id] != nil:
				d.fail(v, field+".id", "duplicate step id %q; it is already used at line %d", id, c.p.byID[id].Pos.Line)
			default:
				s.ID = id
			}
		}
		if s.ID == "" {
			s.ID = fmt.Sprintf("#%d", i) // unreachable by expressions
		}
		s.hasForEach = valueOf(ps, "for_each") != nil
		if v := valueOf(ps, "on_error"); v != nil {
			if oe, ok := d.str(v, field+".on_error"); ok {
				s.OnError = oe
			}
		}
		c.p.Steps = append(c.p.Steps, s)
		c.p.byID[s.ID] = s
	}
	for i, s := range c.p.Steps {
		field := fmt.Sprintf("steps[%d].on_error", i)
		switch s.OnError {
		case "fail", "continue":
		default:
			fb := c.p.byID[s.OnError]
			v := valueOf(raws[i].pairs, "on_error")
			switch {
			case fb == nil:
				others := slices.DeleteFunc(c.stepIDs(), func(id string) bool { return id == s.ID })
				d.fail(v, field, "%q is neither fail, continue nor a step id; %s", s.OnError, didYouMean(s.OnError, append([]string{"fail", "continue"}, others...), "the choices"))
			case fb == s:
				d.fail(v, field, "a step cannot be its own fallback")
			default:
				s.fallback = fb
				fb.Fallback = true
				c.fallbackOf[fb.ID] = append(c.fallbackOf[fb.ID], s.ID)
			}
		}
	}
	for i, s := range c.p.Steps {
		if raws[i].node != nil {
			c.step(s, raws[i].node, raws[i].pairs, fmt.Sprintf("steps[%d]", i))
		}
	}
}

// toolPending is Loader.ToolPending, or "" without one.
func (c *pcomp) toolPending(t string) string {
	if c.pending == nil {
		return ""
	}
	return c.pending(t)
}

func (c *pcomp) stepIDs() []string {
	out := make([]string, 0, len(c.p.Steps))
	for _, s := range c.p.Steps {
		if !strings.HasPrefix(s.ID, "#") {
			out = append(out, s.ID)
		}
	}
	return out
}

func (c *pcomp) step(s *Step, n *yaml.Node, pairs []pair, field string) {
	d := c.d
	forEach := valueOf(pairs, "for_each") != nil
	s.args, s.withPos = []argName{}, d.at(n) // no with: no arguments
	refs := map[string]bool{}
	check := c.refChecker(s, refs)
	env := c.envFor(s, false)
	if forEach {
		// for_each first: item has the type of its elements, so that
		// item.nme is an error here, as inputs.nme is.
		for _, kv := range pairs {
			if kv.k.Value == "for_each" {
				c.forEach(s, kv.v, field+".for_each", check)
			}
		}
		env = c.itemEnv(s)
	}
	for _, kv := range pairs {
		k, v := kv.k.Value, kv.v
		f := field + "." + k
		if strings.HasPrefix(k, "x-") {
			continue
		}
		switch k {
		case "id", "on_error":
		case "tool":
			t, ok := d.str(v, f)
			if !ok {
				break
			}
			if strings.Contains(t, "${{") {
				d.fail(v, f, "tool must be written out, not computed, so the pipeline can be checked and drawn before it runs")
				break
			}
			s.Tool, s.toolPos = t, d.at(d.resolve(v, f))
			if c.tools != nil && !c.tools(t) {
				if why := c.toolPending(t); why != "" {
					d.fail(v, f, "%s: %s", t, why)
				} else {
					d.fail(v, f, "unknown tool %q; %s", t, toolHint(t, c.toolList()))
				}
			}
		case "with":
			vv := d.resolve(v, f)
			if vv != nil && vv.Kind != yaml.MappingNode && !isNull(vv) && !isLoneExpr(vv) {
				d.fail(v, f, "want a mapping of argument names to values, got %s", kindName(vv))
				break
			}
			switch {
			case vv == nil || isLoneExpr(vv):
				s.args = nil
			case vv.Kind == yaml.MappingNode:
				s.withPos = d.at(vv)
				for i := 0; i+1 < len(vv.Content); i += 2 {
					s.args = append(s.args, argName{vv.Content[i].Value, d.at(vv.Content[i])})
				}
			}
			s.with = c.value(v, f, env, check)
		case "if":
			src, ok := d.str(v, f)
			if !ok {
				break
			}
			segs, err := splitTemplate(src)
			off := 0
			if err == nil && len(segs) == 1 && segs[0].isExpr {
				src, off = segs[0].text, segs[0].off
			} else if strings.Contains(src, "${{") {
				d.fail(v, f, "write if as one expression, either bare or as a single ${{ }}")
				break
			}
			s.If = src
			s.cond = c.expr(v, f, src, off, c.envFor(s, false), check)
			if s.cond != nil && s.cond.typ != nil && s.cond.typ.Kind().String() != "bool" {
				d.errs = append(d.errs, &Error{Pos: d.at(v), Field: f, Expr: src, Msg: "if must be true or false, but this is " + jsonTypeName(s.cond.typ) + "; compare it, as in x != \"\""})
			}
		case "for_each": // compiled above
		case "concurrency":
			if i, ok := d.integer(v, f, 1); ok {
				s.Concurrency = i
				if !forEach {
					d.fail(kv.k, f, "concurrency bounds for_each items; this step has no for_each")
				}
			}
		case "needs":
			ids, nodes, _ := d.strings(v, f)
			for i, id := range ids {
				if probs := check(id, 0); len(probs) > 0 {
					d.fail(nodes[i], f, "%s", probs[0].msg)
					continue
				}
				if slices.Contains(s.Needs, id) {
					d.fail(nodes[i], f, "%q is listed twice", id)
					continue
				}
				s.Needs = append(s.Needs, id)
			}
		case "retry":
			rp, _ := d.mapping(v, f)
			for _, r := range rp {
				switch r.k.Value {
				case "max":
					if i, ok := d.integer(r.v, f+".max", 0); ok {
						if i > maxRetries {
							d.fail(r.v, f+".max", "%d retries is more than the %d allowed", i, maxRetries)
						}
						s.Retry.Max = i
					}
				case "backoff":
					if t, ok := d.duration(r.v, f+".backoff"); ok {
						s.Retry.Backoff = t
					}
				default:
					d.fail(r.k, f+"."+r.k.Value, "unknown key; %s", suggest(r.k.Value, retryKeys))
				}
			}
		case "timeout":
			if t, ok := d.duration(v, f); ok {
				s.Timeout = t
			}
		default:
			d.fail(kv.k, f, "%s", unknownKey(k, v, true, stepKeys))
		}
	}
	if s.Tool == "" && valueOf(pairs, "tool") == nil && valueOf(pairs, "uses") == nil {
		d.fail(n, field, "a step needs a tool; add tool: <server>__<tool>")
	}
	if s.Fallback && s.fallback != nil {
		d.fail(valueOf(pairs, "on_error"), field+".on_error", "step %s is a fallback for %s, so its own on_error must be fail or continue", s.ID, strings.Join(c.fallbackOf[s.ID], ", "))
	}
	// Deps: needs, then what the expressions read, in file order.
	for _, id := range s.Needs {
		refs[id] = true
	}
	for id := range refs {
		if o := c.p.byID[id]; o != nil && o != s {
			s.deps = append(s.deps, o)
		}
	}
	slices.SortFunc(s.deps, func(a, b *Step) int { return a.index - b.index })
	for _, o := range s.deps {
		s.Deps = append(s.Deps, o.ID)
	}
}

// isLoneExpr reports whether n is a scalar that is one ${{ }}.
func isLoneExpr(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	segs, err := splitTemplate(n.Value)
	return err == nil && len(segs) == 1 && segs[0].isExpr
}

// refChecker returns the check for steps.<id> references (and needs) made
// by step s (nil for the pipeline's outputs); it records them in refs.
func (c *pcomp) refChecker(s *Step, refs map[string]bool) func(string, int) []exprProblem {
	return func(id string, off int) []exprProblem {
		o := c.p.byID[id]
		if o == nil || strings.HasPrefix(id, "#") {
			return []exprProblem{{off: off, msg: fmt.Sprintf("unknown step %q; %s", id, suggestStep(id, c.stepIDs()))}}
		}
		if o.Fallback {
			return []exprProblem{{off: off, msg: fmt.Sprintf("step %s is a fallback (on_error of %s); read steps.%s instead, which holds the fallback's outputs when it ran",
				id, strings.Join(c.fallbackOf[id], ", "), c.fallbackOf[id][0])}}
		}
		if s != nil {
			switch {
			case o == s:
				return []exprProblem{{off: off, msg: fmt.Sprintf("step %s cannot use its own result", id)}}
			case s.Fallback && slices.Contains(c.fallbackOf[s.ID], id):
				// a fallback reads the step it stands in for
			case o.index > s.index && !s.Fallback:
				return []exprProblem{{off: off, msg: fmt.Sprintf("step %s is defined below this step (line %d); a step can only use steps above it, so move %s up", id, o.Pos.Line, id)}}
			}
		}
		refs[id] = true
		return nil
	}
}

// envFor is the type environment of step s's expressions (s nil: the
// pipeline's outputs), with item and index when item is set. Every step
// sees the same steps (references are checked by refChecker), so the
// pipeline has two environments, built once: a pipeline of n steps must
// not build n maps of n steps.
func (c *pcomp) envFor(_ *Step, item bool) *typeEnv {
	i := 0
	if item {
		i = 1
	}
	if c.envs[i] != nil {
		return c.envs[i]
	}
	if c.stepsT == nil {
		c.stepsT = types.Map{}
		for _, o := range c.p.Steps {
			if strings.HasPrefix(o.ID, "#") {
				continue
			}
			out := types.Type(types.Any)
			if o.forEachDeclared() {
				out = types.Array(types.Any)
			}
			c.stepsT[o.ID] = types.Map{"outputs": out, "status": types.String, "error": types.String}
		}
	}
	envT := types.Map{}
	for k := range c.p.env {
		envT[k] = types.String
	}
	m := types.Map{
		"inputs":  c.p.inputsType,
		"steps":   c.stepsT,
		"env":     envT,
		meterName: meterType,
	}
	if item {
		m["item"] = types.Any
		m["index"] = types.Int
	}
	c.envs[i] = newTypeEnv(m)
	return c.envs[i]
}

// validID is id made a valid step id: what is not a letter, digit or _
// becomes _, and an id starting with a digit gets step_ in front.
func validID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	out := string(b)
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "step_" + out
	}
	return out
}

// forEachDeclared is set in the first pass when the node has for_each.
func (s *Step) forEachDeclared() bool { return s.hasForEach }

// value compiles a YAML value that may hold expressions.
func (c *pcomp) value(n *yaml.Node, field string, env *typeEnv, check func(string, int) []exprProblem) *tmpl {
	d := c.d
	if n = d.resolve(n, field); n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		ps, _ := d.mapping(n, field)
		t := &tmpl{kind: tMap}
		dynamic := false
		for _, p := range ps {
			it := c.value(p.v, join(field, p.k.Value), env, check)
			if it == nil {
				it = &tmpl{}
			}
			t.keys = append(t.keys, p.k.Value)
			t.items = append(t.items, it)
			dynamic = dynamic || it.kind != tConst
		}
		if !dynamic {
			m := make(map[string]any, len(t.keys))
			for i, k := range t.keys {
				m[k] = t.items[i].val
			}
			return &tmpl{kind: tConst, val: m}
		}
		return t
	case yaml.SequenceNode:
		t := &tmpl{kind: tList}
		dynamic := false
		for i, cn := range n.Content {
			it := c.value(cn, fmt.Sprintf("%s[%d]", field, i), env, check)
			if it == nil {
				it = &tmpl{}
			}
			t.items = append(t.items, it)
			dynamic = dynamic || it.kind != tConst
		}
		if !dynamic {
			l := make([]any, len(t.items))
			for i, it := range t.items {
				l[i] = it.val
			}
			return &tmpl{kind: tConst, val: l}
		}
		return t
	}
	if n.ShortTag() != "!!str" || !strings.Contains(n.Value, "${{") {
		return &tmpl{kind: tConst, val: scalarValue(n)}
	}
	segs, err := splitTemplate(n.Value)
	if err != nil {
		te := err.(*templateError)
		d.errs = append(d.errs, &Error{Pos: exprPos(d, n, te.off), Field: field, Msg: te.msg})
		return nil
	}
	if len(segs) == 1 && segs[0].isExpr {
		p := c.expr(n, field, segs[0].text, segs[0].off, env, check)
		if p == nil {
			return nil
		}
		return &tmpl{kind: tExpr, prog: p, pos: d.at(n)}
	}
	t := &tmpl{kind: tInterp, pos: d.at(n)}
	for _, sg := range segs {
		if !sg.isExpr {
			t.parts = append(t.parts, tpart{lit: sg.text})
			continue
		}
		p := c.expr(n, field, sg.text, sg.off, env, check)
		if p == nil {
			return nil
		}
		t.parts = append(t.parts, tpart{prog: p})
	}
	return t
}

// expr compiles one expression found at byte offset off of n's value.
func (c *pcomp) expr(n *yaml.Node, field, src string, off int, env *typeEnv, check func(string, int) []exprProblem) *program {
	p, probs := c.eng.compile(src, env, check)
	for _, pr := range probs {
		c.d.errs = append(c.d.errs, &Error{Pos: exprPos(c.d, n, off+pr.off), Field: field, Expr: src, Msg: pr.msg})
	}
	if _, declared := c.p.inputs["properties"]; p != nil && !declared {
		// Without properties, inputs takes any name, and one no caller
		// passes is null (or "" in text) when the pipeline runs.
		for _, r := range p.inputReads {
			c.p.Warnings = append(c.p.Warnings, &Error{Pos: exprPos(c.d, n, off+r.off), Field: field, Expr: src, Warning: true,
				Msg: fmt.Sprintf("inputs.%s is not declared: the pipeline's inputs schema has no properties, so nothing tells a caller to pass %s, and it is null when it runs; declare it, as in inputs: {type: object, properties: {%s: {type: string}}, required: [%s]}", r.id, r.id, r.id, r.id)})
		}
	}
	return p
}

// exprPos is the place of byte off of scalar n's value, exact for plain
// and simply quoted one-line scalars, the scalar's start otherwise.
func exprPos(d *decoder, n *yaml.Node, off int) Pos {
	p := d.at(n)
	if strings.Contains(n.Value, "\n") || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return p
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		p.Col++
	}
	p.Col += len([]rune(n.Value[:min(off, len(n.Value))]))
	return p
}

// finish checks what needs the whole graph: fallback steps read only what
// is done when they run, and pre-encodes constant arguments.
func (c *pcomp) finish() {
	p := c.p
	used := map[*Step]bool{}
	for _, s := range p.Steps {
		for _, dp := range s.deps {
			used[dp] = true
		}
		if s.fallback != nil {
			anc := ancestors(s)
			for _, dp := range s.fallback.deps {
				if dp != s && !anc[dp] {
					c.d.errs = append(c.d.errs, &Error{Pos: s.fallback.Pos, Field: "steps." + s.fallback.ID,
						Msg: fmt.Sprintf("fallback step %s uses step %s, which step %s (whose on_error names it) does not wait for; add %s to the needs of %s",
							s.fallback.ID, dp.ID, s.ID, dp.ID, s.ID)})
				}
			}
		}
		if s.with == nil {
			s.withJSON = []byte("{}")
		} else if s.with.kind == tConst {
			b, err := json.Marshal(s.with.val)
			if err != nil {
				c.d.errs = append(c.d.errs, &Error{Pos: s.Pos, Field: "steps." + s.ID + ".with", Msg: err.Error()})
			}
			s.withJSON = b
		}
	}
	for _, s := range p.Steps {
		if !s.Fallback && !used[s] {
			p.sinks = append(p.sinks, s)
		}
	}
}

// ancestors returns every step s waits for, directly or not.
func ancestors(s *Step) map[*Step]bool {
	seen := map[*Step]bool{}
	stack := slices.Clone(s.deps)
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !seen[d] {
			seen[d] = true
			stack = append(stack, d.deps...)
		}
	}
	return seen
}
