package config

import (
	"strings"
	"testing"
)

// TestInlinePipelines: pipelines.inline is kept as the YAML written, with
// its positions and without ${VAR} expansion, since ${{ }} is the
// pipelines' own syntax; dirs and env decode as usual, and keys stay
// strict.
func TestInlinePipelines(t *testing.T) {
	c, err := Parse(strings.NewReader(`
pipelines:
  dirs: [./p]
  env: [HOME]
  inline:
    hello:
      steps:
        - id: a
          tool: x__echo
          with: {message: "${{ inputs.who }} ${HOME}"}
`), "/cfg/skillgate.yaml", lookupTest)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Pipelines.Dirs; len(got) != 1 || got[0] != "/cfg/p" {
		t.Errorf("dirs = %v", got)
	}
	if got := c.Pipelines.Env; len(got) != 1 || got[0] != "HOME" {
		t.Errorf("env = %v", got)
	}
	n := c.Pipelines.Inline
	if n == nil || n.Line != 6 || n.Content[0].Value != "hello" {
		t.Fatalf("inline = %+v", n)
	}
	msg := n.Content[1].Content[1].Content[0].Content[5].Content[1]
	if msg.Value != "${{ inputs.who }} ${HOME}" || msg.Line != 10 {
		t.Errorf("message = %q at line %d, want it unexpanded at line 10", msg.Value, msg.Line)
	}

	_, err = Parse(strings.NewReader("pipelines:\n  dir: [./p]\n"), "x.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `x.yaml:2:3: pipelines.dir: unknown key; did you mean "dirs"?`) {
		t.Errorf("typo: %v", err)
	}
}
