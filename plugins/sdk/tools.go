package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// maxToolName is the longest tool name ValidateTools accepts: the limit of
// the big LLM APIs, which take names matching ^[a-zA-Z0-9_-]{1,64}$.
const maxToolName = 64

// ValidateTools reports what is wrong with an executor's tool definitions
// (Definitions.Tools), one error per problem, each naming the tool (or its
// index when it has no usable name); nil means they are fine to ship.
// package sdktest runs it on every Load and every change sent to Watch.
//
// A tool must be a JSON object whose "name" matches ^[a-zA-Z0-9_-]{1,64}$,
// the names LLM APIs accept (MCP allows more, such as '.', which the
// gateway rewrites to '_', so that the model sees another name than the
// one you declared); no name may appear twice (the gateway drops the
// second). Its "inputSchema" must be a JSON Schema object with
// "type": "object" (a tool without arguments says
// {"type":"object"}); an "outputSchema", when present, must be one too.
//
// The gateway namespaces each name (<source>__<name>) and shortens an
// exposed name past 64 characters with a hash, so keep names short.
// ValidateTools checks the schemas' shape only, not that they are valid
// JSON Schema. The gateway does not check a result's structuredContent
// against the tool's outputSchema either: that is the executor's job
// (package sdktest checks the top level of it in tests).
func ValidateTools(tools []json.RawMessage) error {
	var errs []error
	seen := make(map[string]int, len(tools))
	for i, raw := range tools {
		var t struct {
			Name         *string         `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			errs = append(errs, fmt.Errorf("tool #%d: not a JSON object: %v", i+1, err))
			continue
		}
		what := fmt.Sprintf("tool #%d", i+1)
		switch {
		case t.Name == nil:
			errs = append(errs, fmt.Errorf("%s has no \"name\"", what))
		case !validToolName(*t.Name):
			what = fmt.Sprintf("tool %q", *t.Name)
			errs = append(errs, fmt.Errorf("%s: the name must be 1 to %d letters, digits, '_' or '-' (what LLM APIs accept)", what, maxToolName))
		default:
			what = fmt.Sprintf("tool %q", *t.Name)
			if first, dup := seen[*t.Name]; dup {
				errs = append(errs, fmt.Errorf("%s is defined twice (tools #%d and #%d); the gateway keeps only the first", what, first, i+1))
			} else {
				seen[*t.Name] = i + 1
			}
		}
		if t.InputSchema == nil {
			errs = append(errs, fmt.Errorf("%s has no \"inputSchema\"; a tool without arguments says {\"type\":\"object\"}", what))
		} else if err := objectSchema(t.InputSchema); err != nil {
			errs = append(errs, fmt.Errorf("%s: inputSchema %v", what, err))
		}
		if t.OutputSchema != nil {
			if err := objectSchema(t.OutputSchema); err != nil {
				errs = append(errs, fmt.Errorf("%s: outputSchema %v", what, err))
			}
		}
	}
	return errors.Join(errs...)
}

// objectSchema checks that a schema is a JSON object with "type": "object",
// as MCP requires of a tool's inputSchema and outputSchema.
func objectSchema(raw json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errors.New(`is null; it must be a JSON object with "type": "object"`)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(raw, &s); err != nil {
		return errors.New(`is not a JSON object; it must be one, with "type": "object"`)
	}
	var typ string
	if err := json.Unmarshal(s["type"], &typ); err != nil || typ != "object" {
		return fmt.Errorf(`must have "type": "object", not %s`, typeOrMissing(s["type"]))
	}
	return nil
}

func typeOrMissing(raw json.RawMessage) string {
	if raw == nil {
		return "no type"
	}
	return `"type": ` + string(raw)
}

func validToolName(s string) bool {
	if s == "" || len(s) > maxToolName {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
