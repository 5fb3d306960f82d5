package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Tool returns the pipeline's MCP tool definition: its Name, description,
// inputSchema from inputs and an outputSchema derived from outputs (each
// output typed where the expression's type is known). The gateway sets
// the served name.
func (p *Pipeline) Tool() json.RawMessage {
	def := map[string]any{"name": p.Name, "inputSchema": p.inputs, "outputSchema": p.outputSchema()}
	if p.Description != "" {
		def["description"] = p.Description
	}
	b, err := json.Marshal(def)
	if err != nil {
		panic("pipelines: tool definition: " + err.Error()) // only JSON values are stored
	}
	return b
}

func (p *Pipeline) outputSchema() map[string]any {
	if p.outputs != nil && p.outputs.kind == tMap {
		return outSchema(p.outputs)
	}
	if p.outputs != nil {
		return map[string]any{"type": "object"}
	}
	props := map[string]any{}
	for _, s := range p.sinks {
		props[s.ID] = map[string]any{}
	}
	return map[string]any{"type": "object", "properties": props}
}

// stages groups the steps that may run at once: each step is one stage
// after the latest of its dependencies. Fallback steps are left out.
func (p *Pipeline) stages() [][]*Step {
	level := map[*Step]int{}
	var out [][]*Step
	for _, s := range p.Steps {
		if s.Fallback {
			continue
		}
		l := 0
		for _, d := range s.deps {
			l = max(l, level[d]+1)
		}
		level[s] = l
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], s)
	}
	return out
}

// Graph returns the step graph as text: the stages in order, the steps of
// a stage able to run in parallel, with what each waits for.
func (p *Pipeline) Graph() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s (tool %s)\n", p.Name, p.ToolName)
	for i, st := range p.stages() {
		fmt.Fprintf(&b, "stage %d:\n", i+1)
		for _, s := range st {
			fmt.Fprintf(&b, "  %s -> %s%s\n", s.ID, s.Tool, s.notes())
		}
	}
	for _, s := range p.Steps {
		if s.fallback != nil {
			fmt.Fprintf(&b, "on failure of %s: %s -> %s%s\n", s.ID, s.fallback.ID, s.fallback.Tool, s.fallback.notes())
		}
	}
	return b.String()
}

func (s *Step) notes() string {
	var n []string
	if len(s.Deps) > 0 {
		n = append(n, "after "+strings.Join(s.Deps, ", "))
	}
	if s.If != "" {
		n = append(n, "if "+s.If)
	}
	if s.ForEach != "" {
		n = append(n, fmt.Sprintf("for each of %s, %d at a time", s.ForEach, s.Concurrency))
	}
	if s.Retry.Max > 0 {
		n = append(n, fmt.Sprintf("retry %d, backoff %s", s.Retry.Max, s.Retry.Backoff))
	}
	if s.Timeout > 0 {
		n = append(n, "timeout "+s.Timeout.String())
	}
	if s.OnError == "continue" {
		n = append(n, "on error continue")
	}
	if len(n) == 0 {
		return ""
	}
	return "  [" + strings.Join(n, "; ") + "]"
}

// Mermaid returns the step graph as a Mermaid flowchart.
func (p *Pipeline) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	b.WriteString("  inputs([inputs])\n")
	for _, s := range p.Steps {
		shape := "[\"%s<br/>%s\"]"
		if s.ForEach != "" {
			shape = "[[\"%s<br/>%s (for each)\"]]"
		}
		if s.If != "" {
			shape = "{{\"%s<br/>%s (if)\"}}"
		}
		fmt.Fprintf(&b, "  %s"+shape+"\n", s.ID, s.ID, s.Tool)
	}
	b.WriteString("  outputs([outputs])\n")
	used := map[*Step]bool{}
	for _, s := range p.Steps {
		if s.Fallback {
			continue
		}
		if len(s.deps) == 0 {
			fmt.Fprintf(&b, "  inputs --> %s\n", s.ID)
		}
		for _, d := range s.deps {
			used[d] = true
			fmt.Fprintf(&b, "  %s --> %s\n", d.ID, s.ID)
		}
		if s.fallback != nil {
			fmt.Fprintf(&b, "  %s -. on error .-> %s\n", s.ID, s.fallback.ID)
		}
	}
	for _, s := range p.Steps {
		if !s.Fallback && !used[s] {
			fmt.Fprintf(&b, "  %s --> outputs\n", s.ID)
		}
	}
	return b.String()
}

// Plan is a dry run: the stages in order, each step's arguments with what
// can be known before anything runs (from args, env and constants)
// resolved, and the rest shown as written. args must fit the inputs.
func (p *Pipeline) Plan(args json.RawMessage) (string, error) {
	in, err := p.arguments(args)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	env := func() map[string]any { return map[string]any{"inputs": in, "env": p.env, "steps": map[string]any{}} }
	show := func(t *tmpl) string {
		if t == nil {
			return "{}"
		}
		if t.static() {
			v, err := t.eval(ctx, p.eng, env())
			if err != nil {
				return t.String() + "  (error: " + err.Error() + ")"
			}
			b, _ := marshalBounded(v, 4096)
			if b == nil {
				return t.String()
			}
			return string(b)
		}
		return t.String() + "  (known when it runs)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan of %s\n", p.Name)
	step := func(s *Step, indent string) {
		fmt.Fprintf(&b, "%s%s -> %s%s\n", indent, s.ID, s.Tool, s.notes())
		if s.cond != nil && len(s.cond.refs) == 0 && !s.cond.item {
			v, err := p.eng.eval(ctx, s.cond, env())
			fmt.Fprintf(&b, "%s  if: %v", indent, v)
			if err != nil {
				fmt.Fprintf(&b, " (error: %v)", err)
			}
			b.WriteString("\n")
		}
		if s.forEach != nil {
			fmt.Fprintf(&b, "%s  for_each: %s\n", indent, show(s.forEach))
		}
		fmt.Fprintf(&b, "%s  with: %s\n", indent, show(s.with))
	}
	for i, st := range p.stages() {
		fmt.Fprintf(&b, "stage %d:\n", i+1)
		for _, s := range st {
			step(s, "  ")
		}
	}
	for _, s := range p.Steps {
		if s.fallback != nil {
			fmt.Fprintf(&b, "on failure of %s:\n", s.ID)
			step(s.fallback, "  ")
		}
	}
	if p.outputs != nil {
		fmt.Fprintf(&b, "outputs: %s\n", show(p.outputs))
	}
	return b.String(), nil
}
