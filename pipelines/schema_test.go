package pipelines

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// The JSON Schema stays valid JSON and names exactly the keys the loader
// knows.
func TestSchemaFileMatchesLoader(t *testing.T) {
	b, err := os.ReadFile("pipeline.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
		Defs       struct {
			Step struct {
				Properties map[string]any `json:"properties"`
			} `json:"step"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	if got, want := keys(s.Properties), slices.Sorted(slices.Values(pipelineKeys)); !slices.Equal(got, want) {
		t.Errorf("schema pipeline keys %v, loader %v", got, want)
	}
	if got, want := keys(s.Defs.Step.Properties), slices.Sorted(slices.Values(stepKeys)); !slices.Equal(got, want) {
		t.Errorf("schema step keys %v, loader %v", got, want)
	}
	// Every example is a YAML mapping with the required keys.
	files, _ := filepath.Glob("../examples/pipelines/*.yaml")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		var doc map[string]any
		if err := yaml.Unmarshal(src, &doc); err != nil || doc["steps"] == nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
