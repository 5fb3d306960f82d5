package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// deepTool is a tool whose inputSchema nests levels objects deep (each
// level a "properties" and a property: two JSON levels).
func deepTool(name string, levels int) json.RawMessage {
	schema := `{"type":"string","description":"a [ { in a string } ] \" ["}`
	for range levels {
		schema = `{"type":"object","properties":{"a":` + schema + `}}`
	}
	return json.RawMessage(`{"name":"` + name + `","inputSchema":` + schema + `}`)
}

// A definition nested deeper than MaxDepth is dropped at intake with a
// Conflict of its source that says what to fix; one a little below it,
// with brackets inside strings, is served.
func TestNestedTooDeep(t *testing.T) {
	s := Build([]Source{{ID: "up", Namespace: "up", Defs: sdk.Definitions{Tools: []json.RawMessage{
		deepTool("deep", MaxDepth), deepTool("fine", MaxDepth/2-2),
	}}}}, Options{Policy: PolicyPrefix})
	if _, ok := s.Tool("up__deep"); ok {
		t.Error("a tool nested deeper than MaxDepth is served")
	}
	if _, ok := s.Tool("up__fine"); !ok {
		t.Error("a tool nested below MaxDepth is not served")
	}
	var got []Conflict
	for _, c := range s.Conflicts() {
		if c.Resolution == resTooDeep {
			got = append(got, c)
		}
	}
	if len(got) != 1 || !got[0].Own() || got[0].Original != "deep" || !strings.Contains(got[0].String(), "nests deeper than 128 levels") {
		t.Errorf("conflicts %+v; want one for deep that says it nests too deeply", got)
	}
}
