package config

import (
	"slices"
	"strings"
	"testing"
)

// env_passthrough takes variable names and prefixes ending in *, on a
// command server and under executors.mcp; anything else is an error at
// its file:line.
func TestEnvPassthrough(t *testing.T) {
	cfg, err := Parse(strings.NewReader("executors: {mcp: {env_passthrough: [KUBECONFIG]}}\n"+
		"servers:\n  aws: {command: node, env_passthrough: [AWS_PROFILE, 'AWS_*', _X1]}\n"), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers["aws"].EnvPassthrough; !slices.Equal(got, []string{"AWS_PROFILE", "AWS_*", "_X1"}) {
		t.Errorf("env_passthrough = %q", got)
	}
	if got := cfg.Executors["mcp"].EnvPassthrough; !slices.Equal(got, []string{"KUBECONFIG"}) {
		t.Errorf("executors.mcp.env_passthrough = %q", got)
	}
	other := *cfg.Servers["aws"]
	other.EnvPassthrough = []string{"AWS_PROFILE"}
	if cfg.Servers["aws"].Equal(&other) {
		t.Error("servers with different env_passthrough are Equal: a reload would keep the old one")
	}

	_, err = Parse(strings.NewReader("executors: {script: {env_passthrough: [HOME]}}\n"+
		"servers:\n"+
		"  a: {command: node, env_passthrough: ['*', 'A B', '1X', 'A*B']}\n"+
		"  r: {url: 'https://h/mcp', env_passthrough: [X]}\n"), "f.yaml", nil)
	for _, want := range []string{
		"f.yaml:1:39: executors.script.env_passthrough: env_passthrough is for the mcp executor (stdio servers) only",
		`f.yaml:3:40: servers.a.env_passthrough[0]: "*" is not a variable name or prefix`,
		`f.yaml:3:45: servers.a.env_passthrough[1]: "A B" is not a variable name or prefix`,
		`f.yaml:3:52: servers.a.env_passthrough[2]: "1X"`,
		`f.yaml:3:58: servers.a.env_passthrough[3]: "A*B"`,
		"f.yaml:4:46: servers.r.env_passthrough: env_passthrough is for command servers only",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse = %v\nwant %q", err, want)
		}
	}
}
