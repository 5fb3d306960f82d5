package sdk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestValidateTools(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []string
		want  []string // in the error; none means valid
	}{
		{name: "valid", tools: []string{
			`{"name":"greet","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}},"outputSchema":{"type":"object"}}`,
			`{"name":"Count-down_2","inputSchema":{"type":"object"}}`,
		}},
		{name: "none"},
		{name: "no name", tools: []string{`{"inputSchema":{"type":"object"}}`}, want: []string{`tool #1 has no "name"`}},
		{name: "dot", tools: []string{`{"name":"get.weather","inputSchema":{"type":"object"}}`}, want: []string{`tool "get.weather": the name must be 1 to 64`}},
		{name: "empty name", tools: []string{`{"name":"","inputSchema":{"type":"object"}}`}, want: []string{`tool "": the name must be`}},
		{name: "long name", tools: []string{`{"name":"` + strings.Repeat("a", 65) + `","inputSchema":{"type":"object"}}`}, want: []string{"the name must be 1 to 64"}},
		{name: "duplicate", tools: []string{`{"name":"a","inputSchema":{"type":"object"}}`, `{"name":"a","inputSchema":{"type":"object"}}`},
			want: []string{`tool "a" is defined twice (tools #1 and #2)`}},
		{name: "no input schema", tools: []string{`{"name":"a"}`}, want: []string{`tool "a" has no "inputSchema"`}},
		{name: "null input schema", tools: []string{`{"name":"a","inputSchema":null}`}, want: []string{`tool "a": inputSchema is null`}},
		{name: "array schema", tools: []string{`{"name":"a","inputSchema":[]}`}, want: []string{`tool "a": inputSchema is not a JSON object`}},
		{name: "untyped schema", tools: []string{`{"name":"a","inputSchema":{"properties":{}}}`}, want: []string{`inputSchema must have "type": "object", not no type`}},
		{name: "string output", tools: []string{`{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"string"}}`},
			want: []string{`tool "a": outputSchema must have "type": "object", not "type": "string"`}},
		{name: "not an object", tools: []string{`"greet"`}, want: []string{"tool #1: not a JSON object"}},
		{name: "every problem", tools: []string{`{"name":"a b"}`, `{"inputSchema":{}}`},
			want: []string{`tool "a b": the name`, `tool "a b" has no "inputSchema"`, `tool #2 has no "name"`, `tool #2: inputSchema must have`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tools []json.RawMessage
			for _, s := range tc.tools {
				tools = append(tools, json.RawMessage(s))
			}
			err := sdk.ValidateTools(tools)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("ValidateTools: %v, want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateTools: valid, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ValidateTools: %v, want it to say %q", err, w)
				}
			}
		})
	}
}
