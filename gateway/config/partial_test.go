package config

import (
	"strings"
	"testing"
)

// TestParseForValidate checks that a config with problems outside its
// pipelines comes back with them, pipelines intact, and that ProblemIn
// tells which parts have problems.
func TestParseForValidate(t *testing.T) {
	const yaml = `servers:
  everything:
    command: npx
    timout: 3s
pipelines:
  inline:
    p1:
      steps: [{id: a, tool: x}]
`
	cfg, err := ParseForValidate(strings.NewReader(yaml), "c.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "c.yaml:4:5: servers.everything.timout: unknown key") {
		t.Fatalf("want the unknown key, got %v", err)
	}
	if cfg == nil || cfg.Pipelines.Inline == nil || cfg.Servers["everything"].Command != "npx" {
		t.Fatalf("the config is not returned as read: %+v", cfg)
	}
	if ProblemIn(err, "pipelines") || !ProblemIn(err, "servers") || ProblemIn(nil, "servers") {
		t.Error("ProblemIn is wrong")
	}
	// Parse itself still returns no config.
	if c, err := Parse(strings.NewReader(yaml), "c.yaml", nil); c != nil || err == nil {
		t.Errorf("Parse = %v, %v; want nil and the problem", c, err)
	}
	// Not YAML: no config.
	if c, err := ParseForValidate(strings.NewReader("a: [\n"), "c.yaml", nil); c != nil || err == nil {
		t.Errorf("ParseForValidate of bad YAML = %v, %v", c, err)
	}
}
