package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/suggest"
)

// argNames is what a tool's inputSchema says of the arguments' names, for
// refusing one it does not name: a misspelt optional argument would be
// dropped without a word. It is nil (everything passes) when the schema
// lets other names in (additionalProperties set to anything but false)
// or names no properties at all, the rule pipelines follow for their
// inputs.
type argNames struct {
	tool  string
	known []string // sorted
}

func newArgNames(tool string, schema json.RawMessage) *argNames {
	var top struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &top) != nil || top.Properties == nil {
		return nil
	}
	if ap := strings.TrimSpace(string(top.AdditionalProperties)); ap != "" && ap != "false" {
		return nil
	}
	known := make([]string, 0, len(top.Properties))
	for k := range top.Properties {
		known = append(known, k)
	}
	slices.Sort(known)
	return &argNames{tool: tool, known: known}
}

// check returns an error naming the first argument of args (a JSON
// object), in sorted order, that the schema does not name, with the name
// meant when it is near one.
func (a *argNames) check(args json.RawMessage) error {
	if a == nil {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return nil // argcheck says what is wrong
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		if _, ok := slices.BinarySearch(a.known, k); !ok {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil
	}
	name := slices.Min(names)
	msg := fmt.Sprintf("tool %s has no argument %q", a.tool, name)
	switch near, ok := closest(name, a.known); {
	case ok:
		msg += fmt.Sprintf("; did you mean %q?", near)
	case len(a.known) == 0:
		msg += "; it takes no arguments"
	default:
		msg += "; its arguments are " + strings.Join(a.known, ", ")
	}
	return errors.New(msg)
}

// closest is the known name nearest to name when it is near enough to be
// a typo: at most two edits, and no more than half the longer name.
func closest(name string, known []string) (string, bool) {
	near, ok := suggest.Closest(name, known)
	if !ok {
		return "", false
	}
	d := suggest.Distance(strings.ToLower(name), strings.ToLower(near))
	return near, 2*d <= max(len(name), len(near))
}
