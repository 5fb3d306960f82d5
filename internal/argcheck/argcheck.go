// Package argcheck validates a tool call's arguments against the tool's
// inputSchema before the tool runs, so that a call missing a required
// argument, or giving one of the wrong type, gets a JSON-RPC -32602 error
// naming the argument instead of whatever the tool's code makes of it (a
// Python KeyError prints just 'name').
//
//	c := argcheck.New(tool.InputSchema)
//	if err := c.Check(args); err != nil {
//		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
//	}
package argcheck

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Checker validates arguments against one inputSchema. The zero value and
// nil accept every JSON object. It is safe for concurrent use.
type Checker struct {
	tool     string
	required []string
	props    map[string]json.RawMessage
	// res validates the whole schema; nil when it cannot be resolved (a
	// $ref to another document, a $schema other than draft-07 or 2020-12),
	// and then only required is checked.
	res *jsonschema.Resolved
}

// New returns a Checker for the tool named tool with the inputSchema
// schema (a JSON Schema object, as in an MCP tool definition). A schema
// that requires nothing and describes no property gives nil: there is
// nothing to check past the arguments being an object. A schema
// jsonschema-go cannot resolve gives a Checker of its required arguments
// only (see Partial).
func New(tool string, schema json.RawMessage) *Checker {
	if len(schema) == 0 {
		return nil
	}
	var top struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(schema, &m)
	delete(m, "type")
	delete(m, "title")
	delete(m, "description")
	delete(m, "$schema")
	if len(m) == 0 {
		return nil
	}
	c := &Checker{tool: tool, required: top.Required, props: top.Properties}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err == nil {
		if res, err := s.Resolve(&jsonschema.ResolveOptions{Loader: refuse}); err == nil {
			c.res = res
		}
	}
	return c
}

// refuse is the loader of remote $refs: a call is never validated against
// a document fetched from elsewhere.
func refuse(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("%s: schemas are not fetched", u)
}

// Partial reports whether c checks only the required arguments, its
// schema being one jsonschema-go cannot resolve.
func (c *Checker) Partial() bool { return c != nil && c.res == nil }

// Check returns nil when args (a JSON object) satisfies the schema, or an
// error naming each missing required argument, or the argument whose value
// the schema refuses and why.
func (c *Checker) Check(args json.RawMessage) error {
	if c == nil {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return fmt.Errorf("tool %s: arguments must be a JSON object: %v", c.tool, err)
	}
	var missing []string
	for _, r := range c.required {
		if _, ok := obj[r]; !ok && !slices.Contains(missing, r) {
			missing = append(missing, r)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return fmt.Errorf("tool %s: missing required argument %q%s", c.tool, missing[0], c.about(missing[0]))
	default:
		return fmt.Errorf("tool %s: missing required arguments %s", c.tool, quoteAll(missing))
	}
	if c.res == nil {
		return nil
	}
	err := c.res.Validate(obj)
	if err == nil {
		return nil
	}
	return fmt.Errorf("tool %s: %s", c.tool, explain(err))
}

// about returns ` (type, description)` for a property the schema
// describes, so the error tells the caller what to send.
func (c *Checker) about(name string) string {
	var p struct {
		Type        any    `json:"type"`
		Description string `json:"description"`
	}
	if json.Unmarshal(c.props[name], &p) != nil {
		return ""
	}
	var parts []string
	switch t := p.Type.(type) {
	case string:
		parts = append(parts, t)
	case []any:
		var ts []string
		for _, x := range t {
			ts = append(ts, fmt.Sprint(x))
		}
		parts = append(parts, strings.Join(ts, " or "))
	}
	if p.Description != "" {
		parts = append(parts, p.Description)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

// explain turns jsonschema-go's "validating root: validating
// /properties/by: type: ..." into "argument "by": type: ...".
func explain(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		where, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		msg = after
		if arg, ok := strings.CutPrefix(where, "/properties/"); ok && !strings.Contains(arg, "/") {
			return fmt.Sprintf("invalid argument %q: %s", unescape(arg), trimLast(msg))
		}
	}
	return "invalid arguments: " + trimLast(msg)
}

// trimLast drops the "validating ..." prefixes nested inside msg, keeping
// the innermost reason.
func trimLast(msg string) string {
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		_, after, ok := strings.Cut(rest, ": ")
		if !ok {
			return msg
		}
		msg = after
	}
}

// unescape undoes JSON Pointer escaping (RFC 6901) of one reference token.
func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
