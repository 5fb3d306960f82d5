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

// SecretValues holds what ${VAR}s gave command, args, cwd and url when the
// variable is named like a credential or the value looks like a token, and
// in url what lands outside the host and port; ordinary values (a folder
// from ${HOME}, a host, a port) are left out, so that they still show.
func TestSecretValues(t *testing.T) {
	vars := map[string]string{
		"MY_API_KEY": "key-value-123", "SHAPED": "ghp_abcdefghijklmnopqrstuvwxyz0123", "HOME": "/home/someone",
		"PLAIN": "plain-value", "HOST": "mcp.example.com", "PORT": "8443", "ZAP_ID": "zap-path-123456",
		"WHOLE": "https://user-in-url@h.example.com/mcp/whole-path-123?q=1", "BIN_TOKEN": "/opt/bin/tokentool",
	}
	yaml := `servers:
  s:
    command: ${BIN_TOKEN}
    args: [--api-key, "${MY_API_KEY}", "--opt=${SHAPED}", "${HOME}/project", "${PLAIN}", '$${MY_API_KEY}']
    cwd: ${HOME}/work
  zap: {url: "https://${HOST}:${PORT}/mcp/${ZAP_ID}/sse#${PLAIN}"}
  whole: {url: "${WHOLE}"}
`
	cfg, err := Parse(strings.NewReader(yaml), "f.yaml", func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"s":     {"/opt/bin/tokentool", "ghp_abcdefghijklmnopqrstuvwxyz0123", "key-value-123"},
		"zap":   {"plain-value", "zap-path-123456"},
		"whole": {"/mcp/whole-path-123?q=1", "user-in-url"},
	} {
		if got := cfg.Servers[name].SecretValues; !slices.Equal(got, want) {
			t.Errorf("%s: SecretValues = %q, want %q", name, got, want)
		}
	}
}
