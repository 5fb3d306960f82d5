package pipelines

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// What the loader checks once every pipeline of a batch has compiled: each
// step's arguments against the tool it calls, and pipelines calling
// themselves through others.

// crossCheck checks the pipelines ps of a batch against each other and
// against the tools' input schemas. It holds back the pipelines with
// problems, and those calling them, and adds warnings to the ones served.
func (l *Loader) crossCheck(ps []*Pipeline, heads []head) ([]*Pipeline, []*Error) {
	byTool := make(map[string]*Pipeline, len(ps))
	for _, p := range ps {
		byTool[p.ToolName] = p
	}
	inBatch := map[string]bool{}
	for _, h := range heads {
		inBatch[l.toolName(h.name)] = true
	}
	var errs []*Error
	bad := map[*Pipeline]bool{}

	schemas := map[string]map[string]any{}
	toolSchema := func(tool string) map[string]any {
		if s, ok := schemas[tool]; ok {
			return s
		}
		var s map[string]any
		if raw := l.ToolSchema(tool); len(raw) > 0 {
			_ = json.Unmarshal(raw, &s) // a schema that is not an object is not checked
		}
		schemas[tool] = s
		return s
	}
	for _, p := range ps {
		for _, s := range p.Steps {
			switch callee := byTool[s.Tool]; {
			case callee != nil:
				for _, e := range argProblems(p, s, callee.inputs) {
					e.Pipeline = p.Name
					errs = append(errs, e)
					bad[p] = true
				}
				p.Warnings = append(p.Warnings, argTypeWarnings(p, s, callee.inputs)...)
			case inBatch[s.Tool] || l.ToolSchema == nil:
				// a pipeline that did not compile: holdBack reports it
			default:
				for _, e := range argProblems(p, s, toolSchema(s.Tool)) {
					e.Warning = true
					p.Warnings = append(p.Warnings, e)
				}
				p.Warnings = append(p.Warnings, argTypeWarnings(p, s, toolSchema(s.Tool))...)
			}
		}
	}

	// A call along a cycle is always refused when it runs (the call-chain
	// guard), so a cycle every call of which runs whenever its pipeline
	// gets that far holds its pipelines back. One that passes a step that
	// may not run (if, for_each, a fallback) may never close, so it is a
	// warning.
	for _, c := range cycles(ps, byTool, false) {
		c.Error.Pipeline = c.from.Name
		errs = append(errs, c.Error)
		bad[c.from] = true
	}
	kept := make([]*Pipeline, 0, len(ps))
	for _, p := range ps {
		if !bad[p] {
			kept = append(kept, p)
		}
	}
	kept, held := l.holdBack(kept, heads)
	errs = append(errs, held...)

	served := make(map[string]*Pipeline, len(kept))
	for _, p := range kept {
		served[p.ToolName] = p
	}
	for _, c := range cycles(kept, served, true) {
		c.Warning = true
		c.from.Warnings = append(c.from.Warnings, c.Error)
	}
	for _, p := range kept {
		slices.SortStableFunc(p.Warnings, func(a, b *Error) int { return comparePos(a.Pos, b.Pos) })
	}
	return kept, errs
}

func comparePos(a, b Pos) int {
	switch {
	case a.File != b.File:
		return strings.Compare(a.File, b.File)
	case a.Line != b.Line:
		return a.Line - b.Line
	}
	return a.Col - b.Col
}

// argProblems checks the arguments step s of p writes in with against
// schema, the input schema of the tool it calls: names the schema does
// not have, and required ones that are missing. It checks only what is
// sure: nothing when with is one expression (its names are known when it
// runs), and no names when the schema may allow others.
func argProblems(p *Pipeline, s *Step, schema map[string]any) []*Error {
	if schema == nil || s.args == nil {
		return nil
	}
	field := labelled(p.label, fmt.Sprintf("steps[%d].with", s.index))
	props, _ := schema["properties"].(map[string]any)
	var errs []*Error
	if closedObject(schema) {
		known := sortedKeys(props)
		for _, a := range s.args {
			if _, ok := props[a.name]; ok {
				continue
			}
			hint := "it takes no arguments"
			if len(known) > 0 {
				hint = didYouMean(a.name, known, "its arguments")
			}
			errs = append(errs, &Error{Pos: a.pos, Field: join(field, a.name),
				Msg: fmt.Sprintf("%s has no argument %q in its input schema; %s", s.Tool, a.name, hint)})
		}
	}
	var missing []string
	for _, r := range asList(schema["required"]) {
		name, ok := r.(string)
		if !ok || slices.ContainsFunc(s.args, func(a argName) bool { return a.name == name }) {
			continue
		}
		if _, hasDefault := asMap(props[name])["default"]; hasDefault {
			continue
		}
		missing = append(missing, name)
	}
	switch len(missing) {
	case 0:
	case 1:
		errs = append(errs, &Error{Pos: s.withPos, Field: field,
			Msg: fmt.Sprintf("%s requires the argument %s; add it to with", s.Tool, missing[0])})
	default:
		errs = append(errs, &Error{Pos: s.withPos, Field: field,
			Msg: fmt.Sprintf("%s requires the arguments %s and %s; add them to with", s.Tool, strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])})
	}
	return errs
}

// argTypeWarnings checks the type of each argument step s of p writes in
// with, where the loader knows it (a constant, text with ${{ }} in it, or
// one expression whose type the checker found), against the type schema
// gives it. A mismatch is a warning: the value may still convert, and the
// tool's server has the last word.
func argTypeWarnings(p *Pipeline, s *Step, schema map[string]any) []*Error {
	if schema == nil || s.args == nil || s.with == nil {
		return nil
	}
	props, _ := schema["properties"].(map[string]any)
	field := labelled(p.label, fmt.Sprintf("steps[%d].with", s.index))
	var out []*Error
	for _, a := range s.args {
		want := schemaTypes(asMap(props[a.name]))
		got, what := argType(s.with, a.name)
		if len(want) == 0 || got == "" || typeFits(got, want) {
			continue
		}
		out = append(out, &Error{Pos: a.pos, Field: join(field, a.name), Warning: true,
			Msg: fmt.Sprintf("step %s passes %s as %s (%s), but %s's input schema wants %s; %s, or fix the schema",
				s.ID, withArticle(got), a.name, what, s.Tool, orList(want), convertHint(want))})
	}
	return out
}

// convertHint names the function that converts a value to the first of
// want that one converts to.
func convertHint(want []string) string {
	for _, w := range want {
		switch w {
		case "string":
			return "convert it with string(...)"
		case "integer":
			return "convert it with int(...)"
		case "number":
			return "convert it with float(...)"
		}
	}
	return "convert it"
}

// argType is the JSON type of argument name of with, when the loader
// knows it, and how it is written.
func argType(with *tmpl, name string) (typ, what string) {
	var v *tmpl
	switch with.kind {
	case tConst:
		m, _ := with.val.(map[string]any)
		if x, ok := m[name]; ok {
			return constType(x), "a constant"
		}
	case tMap:
		if i := slices.Index(with.keys, name); i >= 0 {
			v = with.items[i]
		}
	}
	if v == nil {
		return "", ""
	}
	switch v.kind {
	case tConst:
		return constType(v.val), "a constant"
	case tInterp:
		return "string", "text with ${{ }} in it"
	case tExpr:
		if v.prog != nil {
			return jsonTypeName(v.prog.typ), "${{ " + v.prog.src + " }}"
		}
	}
	return "", ""
}

// constType is the JSON type of a constant of a pipeline file.
func constType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int64, uint64:
		return "integer"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "" // null: an optional argument left empty
}

// schemaTypes lists the types a property schema allows by its type
// keyword, or none when it does not say.
func schemaTypes(prop map[string]any) []string {
	switch t := prop["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// typeFits reports whether a value of JSON type got is one of want: an
// integer is a number too. A number may hold a whole value, so it is not
// held against integer.
func typeFits(got string, want []string) bool {
	for _, w := range want {
		if w == got || got == "integer" && w == "number" || got == "number" && w == "integer" {
			return true
		}
	}
	return false
}

func withArticle(t string) string {
	if t == "integer" || t == "array" || t == "object" {
		return "an " + t
	}
	return "a " + t
}

func orList(l []string) string {
	a := make([]string, len(l))
	for i, t := range l {
		a[i] = withArticle(t)
	}
	if len(a) == 1 {
		return a[0]
	}
	return strings.Join(a[:len(a)-1], ", ") + " or " + a[len(a)-1]
}

// closedObject reports whether schema names every argument it allows in
// its properties: nothing else (such as additionalProperties, allOf or a
// $ref) may let more in.
func closedObject(schema map[string]any) bool {
	if _, ok := schema["properties"].(map[string]any); !ok {
		return false
	}
	for _, k := range []string{"additionalProperties", "unevaluatedProperties"} {
		if v, has := schema[k]; has && v != false {
			return false
		}
	}
	for _, k := range []string{"patternProperties", "allOf", "anyOf", "oneOf", "not", "if", "$ref", "$dynamicRef", "$recursiveRef", "dependentSchemas", "dependencies"} {
		if _, has := schema[k]; has {
			return false
		}
	}
	return true
}

// edge is a call of one pipeline of a batch by another.
type edge struct {
	step *Step
	to   *Pipeline
}

// mayNotRun reports whether a run of its pipeline may get past s without
// calling its tool: s has an if, is a fallback step, or its for_each may
// be empty.
func (s *Step) mayNotRun() bool {
	if s.cond != nil || s.Fallback {
		return true
	}
	if s.forEach == nil {
		return false
	}
	switch s.forEach.kind {
	case tConst:
		l, ok := s.forEach.val.([]any)
		return !ok || len(l) == 0
	case tList: // a YAML list holding expressions
		return len(s.forEach.items) == 0
	}
	return true
}

// cycleError is a problem (or warning) about pipeline from calling itself
// through others.
type cycleError struct {
	*Error
	from *Pipeline
}

// cycles finds the pipelines of ps that call themselves, directly or
// through others (byTool maps tool names to ps), and returns one finding
// for each, at its call that starts its shortest cycle. Without
// conditional, only calls that always run are followed; with it, every
// call is, and only cycles with a call that may not run are returned.
func cycles(ps []*Pipeline, byTool map[string]*Pipeline, conditional bool) []cycleError {
	out := map[*Pipeline][]edge{}
	for _, p := range ps {
		for _, s := range p.Steps {
			if q := byTool[s.Tool]; q != nil && (conditional || !s.mayNotRun()) {
				out[p] = append(out[p], edge{s, q})
			}
		}
	}
	var found []cycleError
	for _, p := range ps {
		path := shortestCycle(p, out)
		if path == nil {
			continue
		}
		maybe := slices.ContainsFunc(path, func(e edge) bool { return e.step.mayNotRun() })
		if conditional && !maybe {
			continue // already a problem; such a pipeline is not served
		}
		chain := []string{p.ToolName}
		for _, e := range path {
			chain = append(chain, fmt.Sprintf("%s (at %s)", e.to.ToolName, e.step.toolPos))
		}
		how := "calls itself"
		if len(path) > 1 {
			var via []string
			for _, e := range path[:len(path)-1] {
				via = append(via, e.to.ToolName)
			}
			how += " through " + strings.Join(via, ", ")
		}
		msg := fmt.Sprintf("%s %s: %s; the call-chain guard refuses such a call whenever it runs, so %s is not served; remove one of these calls",
			p.ToolName, how, strings.Join(chain, " -> "), p.Name)
		if maybe {
			msg = fmt.Sprintf("%s may call itself: %s; a call that closes this loop is refused when it runs, so make sure the if, for_each or on_error that may skip a step on it always does",
				p.ToolName, strings.Join(chain, " -> "))
		}
		found = append(found, cycleError{&Error{Pos: path[0].step.toolPos, Field: labelled(p.label, fmt.Sprintf("steps[%d].tool", path[0].step.index)), Msg: msg}, p})
	}
	return found
}

// shortestCycle returns the calls of the shortest way from p back to p,
// trying calls in file order, or nil.
func shortestCycle(p *Pipeline, out map[*Pipeline][]edge) []edge {
	type hop struct {
		via  edge
		prev *Pipeline
	}
	seen := map[*Pipeline]hop{}
	queue := []*Pipeline{p}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, e := range out[q] {
			if e.to == p {
				path := []edge{e}
				for at := q; at != p; at = seen[at].prev {
					path = append(path, seen[at].via)
				}
				slices.Reverse(path)
				return path
			}
			if _, ok := seen[e.to]; !ok {
				seen[e.to] = hop{e, q}
				queue = append(queue, e.to)
			}
		}
	}
	return nil
}
