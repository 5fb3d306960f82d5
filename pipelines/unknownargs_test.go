package pipelines

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// An argument the inputs schema does not name is refused, with the
// nearest name, as the CLI's pipeline run refuses it: over MCP it would be
// dropped without a word. A schema with additionalProperties lets it in.
func TestUnknownArgumentRefused(t *testing.T) {
	for _, tc := range []struct{ inputs, args, want string }{
		{"{type: object, properties: {loud: {type: boolean, default: false}, title: {type: string}}}", `{"title": "x", "lound": true}`,
			`invalid arguments: pipeline test has no input "lound"; did you mean "loud"?`},
		{"{type: object, properties: {title: {type: string}}}", `{"zzz": 1}`, `invalid arguments: pipeline test has no input "zzz"; its inputs are title`},
		{"{type: object, properties: {title: {type: string}}, additionalProperties: true}", `{"zzz": 1}`, ""},
		{"{type: object, properties: {title: {type: string}}, additionalProperties: {type: integer}}", `{"zzz": 1}`, ""},
		// Without properties, the schema names nothing to check against.
		{"{type: object}", `{"who": "x"}`, ""},
		{"{type: object, properties: {}}", `{"who": "x"}`, `invalid arguments: pipeline test has no input "who"; it takes no arguments`},
	} {
		p := mustLoad(t, "inputs: "+tc.inputs+"\nsteps: [{id: a, tool: t, with: {m: hi}}]\n")
		raw, err := new(Runner).Run(context.Background(), p, json.RawMessage(tc.args), newFake(map[string]toolFunc{"t": echo}), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, raw)
		switch {
		case tc.want == "" && r.IsError:
			t.Errorf("%s %s: refused: %s", tc.inputs, tc.args, r.text())
		case tc.want != "" && (!r.IsError || !strings.Contains(r.text(), tc.want)):
			t.Errorf("%s %s: got %s\nwant an error with %q", tc.inputs, tc.args, r.text(), tc.want)
		}
	}
}
