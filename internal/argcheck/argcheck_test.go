package argcheck

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	counter := `{"type":"object","properties":{"name":{"type":"string","description":"The counter's name."},"by":{"type":"integer","default":1}},"required":["name"]}`
	tests := []struct {
		name, schema, args string
		want               string // "" for no error
	}{
		{"ok", counter, `{"name":"a"}`, ""},
		{"ok with by", counter, `{"name":"a","by":2}`, ""},
		{"missing", counter, `{}`, `tool counter: missing required argument "name" (string: The counter's name.)`},
		{"wrong type", counter, `{"name":5}`, `tool counter: invalid argument "name": type: 5 has type "integer", want "string"`},
		{"not an integer", counter, `{"name":"a","by":1.5}`, `invalid argument "by"`},
		{"several missing", `{"type":"object","required":["a","b"]}`, `{}`, `missing required arguments "a", "b"`},
		{"no schema to check", `{"type":"object"}`, `{"anything":1}`, ""},
		{"remote ref: required only", `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}},"required":["x"]}`, `{}`, `missing required argument "x"`},
		{"remote ref accepts the rest", `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}},"required":["x"]}`, `{"x":1}`, ""},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"number"}}}}}`, `{"o":{"n":"x"}}`, `invalid argument "o": type: x has type "string", want "number"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New("counter", json.RawMessage(tt.schema)).Check(json.RawMessage(tt.args))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check(%s) = %v, want nil", tt.args, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check(%s) = %v, want an error with %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestNilChecker(t *testing.T) {
	var c *Checker
	if err := c.Check(json.RawMessage(`{}`)); err != nil || c.Partial() {
		t.Errorf("nil Checker: %v, partial %v", err, c.Partial())
	}
	if New("x", nil) != nil || New("x", json.RawMessage(`{"type":"object","description":"d"}`)) != nil {
		t.Error("New of a schema with nothing to check is not nil")
	}
}
