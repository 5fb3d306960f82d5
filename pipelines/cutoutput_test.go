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

// The cut is read from the result's _meta["skillgate/truncated"] flag
// (what plugins/script sets beside its marker line), so an executor's
// cut output is named whatever its text says; with both, the note comes
// once.
func TestCutOutputFlag(t *testing.T) {
	p := mustLoad(t, "steps:\n  - {id: gen, tool: gen}\n  - {id: use, tool: t, with: {x: \"${{ steps.gen.outputs.blob }}\"}}\n")
	marker := "\n[output truncated: 524288 more bytes were dropped past the 1048576-byte output cap]"
	for name, text := range map[string]string{"flag only": `{"blob": "xxxx`, "flag and marker": `{"blob": "xxxx` + marker} {
		t.Run(name, func(t *testing.T) {
			res, _ := json.Marshal(map[string]any{
				"content": []map[string]string{{"type": "text", "text": text}},
				"_meta":   map[string]any{"skillgate/status": "ok", "skillgate/truncated": map[string]int{"dropped": 524288, "cap": 1048576}},
			})
			raw, err := new(Runner).Run(context.Background(), p, nil, newFake(map[string]toolFunc{
				"gen": func(context.Context, map[string]any) (json.RawMessage, error) { return res, nil },
				"t":   echo,
			}), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := decode(t, raw).text()
			const want = "cut at the 1048576-byte output cap (524288 more bytes dropped)"
			if n := strings.Count(got, want); n != 1 {
				t.Errorf("result names the cut %d times, want once:\n%s", n, got)
			}
		})
	}
}

// What was kept of a cut output is text even when it parses: "12345" cut
// from "1234567" is not the number the tool printed.
func TestCutOutputStaysText(t *testing.T) {
	raw := `{"content":[{"type":"text","text":"12345"}],"_meta":{"skillgate/truncated":{"dropped":2,"cap":5}}}`
	v, err := stepOutput(json.RawMessage(raw))
	want := "12345\n[output truncated: 2 more bytes were dropped past the 5-byte output cap]"
	if err != nil || v != want {
		t.Fatalf("stepOutput = %#v, %v; want %q", v, err, want)
	}
}
