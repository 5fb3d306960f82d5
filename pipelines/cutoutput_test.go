package pipelines

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A step whose tool output was cut at the executor's output cap is text
// that is not whole JSON: reading a field of it says it was cut, and what
// to do, instead of only that it is text.
func TestCutOutputNamesTheCut(t *testing.T) {
	p := mustLoad(t, "steps:\n  - {id: gen, tool: gen}\n  - {id: use, tool: t, with: {x: \"${{ steps.gen.outputs.blob }}\"}}\n")
	// What plugins/script's simpleResult makes of a stdout past the cap.
	cut := `{"blob": "` + strings.Repeat("x", 100) + "\n[output truncated: 524288 more bytes were dropped past the 1048576-byte output cap]"
	raw, err := new(Runner).Run(context.Background(), p, nil, newFake(map[string]toolFunc{
		"gen": func(context.Context, map[string]any) (json.RawMessage, error) { return textResult(cut), nil },
		"t":   echo,
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, raw).text()
	for _, want := range []string{"steps.gen.outputs is text", "cut at the 1048576-byte output cap (524288 more bytes dropped)", "script_output_cap"} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
}
