package config

import (
	"slices"
	"strings"
	"testing"
)

// SecretEnv names the env entries that took a value from the environment:
// not literals, not defaults, not escaped ${...}.
func TestSecretEnv(t *testing.T) {
	yaml := `servers:
  s:
    command: x
    env: {A: '${TOKEN_VAR}', B: literal-value, C: '${UNSET:-default-value}', D: 'pre-${TOKEN_VAR}', E: '$${NOT}', F: '${UNSET:-${TOKEN_VAR}}'}
  r: {url: 'http://127.0.0.1:1/mcp', headers: {X-Key: '${TOKEN_VAR}'}}
`
	lookup := func(k string) (string, bool) {
		if k == "TOKEN_VAR" {
			return "secret-value", true
		}
		return "", false
	}
	cfg, err := Parse(strings.NewReader(yaml), "f.yaml", lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Servers["s"].SecretEnv, []string{"A", "D", "F"}; !slices.Equal(got, want) {
		t.Errorf("SecretEnv = %q, want %q", got, want)
	}
	if got := cfg.Servers["r"].SecretEnv; len(got) != 0 {
		t.Errorf("SecretEnv of a url server = %q", got)
	}
}

// An empty server entry is an error, not a panic.
func TestSecretEnvEmptyServer(t *testing.T) {
	if _, err := Parse(strings.NewReader("servers:\n  n:\n"), "f.yaml", nil); err == nil {
		t.Fatal("an empty server entry parsed")
	}
}
