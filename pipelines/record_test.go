package pipelines

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A run's record reads well as JSON: durations in milliseconds under a
// name that says so, and no step left pending once the run is over.
func TestRecordJSON(t *testing.T) {
	p := mustLoad(t, `
steps:
  - {id: a, tool: echo, with: {message: "a -> b & <c>"}, on_error: rescue}
  - {id: rescue, tool: echo, with: {message: fallback}}
outputs: {out: "${{ steps.a.outputs }}", j: "${{ json({'k': 'x -> y'}) }}"}
`)
	r := &Runner{}
	res, err := r.Run(context.Background(), p, nil, newFake(map[string]toolFunc{"echo": echo}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(res); strings.Contains(s, `\u003e`) || !strings.Contains(s, `a -> b & <c>`) || !strings.Contains(s, `{\"k\":\"x -> y\"}`) {
		t.Errorf("result escapes for HTML: %s", s)
	}
	rec := r.Runs()[0]
	rec.Duration, rec.Steps[0].Duration = 1500*time.Microsecond, 2*time.Millisecond
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		DurationMS float64 `json:"duration_ms"`
		Duration   any     `json:"duration"`
		Steps      []struct {
			ID         string  `json:"id"`
			Status     string  `json:"status"`
			DurationMS float64 `json:"duration_ms"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.DurationMS != 1.5 || v.Duration != nil || v.Steps[0].DurationMS != 2 || v.Steps[0].Status != StatusSucceeded {
		t.Errorf("record JSON %s", b)
	}
	if v.Steps[1].ID != "rescue" || v.Steps[1].Status != StatusSkipped {
		t.Errorf("the unused fallback is %q, want %q: %s", v.Steps[1].Status, StatusSkipped, b)
	}
}
