package config

import (
	"strings"
	"testing"
)

// env keys a process environment cannot hold (a line break, NUL, =) and
// auth tokens no request can match (empty or only spaces: Go trims header
// values) are errors.
func TestValidateEnvKeysAndTokens(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"newline", `servers: {s: {command: sh, env: {"K\nL": v}}}`, `"K\nL" is not a variable name`},
		{"nul", `servers: {s: {command: sh, env: {"K\0L": v}}}`, `"K\x00L" is not a variable name`},
		{"equals", `servers: {s: {command: sh, env: {"K=L": v}}}`, `"K=L" is not a variable name`},
		{"blank token", `auth: {tokens: ["   "]}`, "auth.tokens[0]: the token is only spaces"},
		{"tab token", "auth: {tokens: [\"\\t\"]}", "auth.tokens[0]: the token is only spaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.yaml), "f.yaml", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v; want one with %q", err, tc.want)
			}
		})
	}
}

// Passing the gateway's variables by a prefix of one or two characters,
// or loader and interpreter variables that make a server run other code
// (LD_PRELOAD, NODE_OPTIONS, DYLD_*), and a short auth token, are warned
// about; ordinary names and prefixes are not.
func TestWarningsRiskyPassthroughAndShortTokens(t *testing.T) {
	yaml := `auth: {tokens: [short-token, a-long-enough-token-value]}
executors: {mcp: {env_passthrough: ["S*", NODE_OPTIONS]}}
servers:
  s: {command: sh, env_passthrough: ["A*", "AWS_*", KUBECONFIG, LD_PRELOAD, "DYLD_*", "LD_*", PYTHONPATH, LD_LIBRARY_PATH]}
`
	cfg, err := Parse(strings.NewReader(yaml), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings() {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`f.yaml:1:17: auth.tokens[0]: the token is 11 characters`,
		`executors.mcp.env_passthrough[0]: "S*" passes every variable`,
		`executors.mcp.env_passthrough[1]: NODE_OPTIONS`,
		`servers.s.env_passthrough[0]: "A*" passes every variable`,
		`servers.s.env_passthrough[3]: LD_PRELOAD`, `servers.s.env_passthrough[4]: DYLD_*`, `servers.s.env_passthrough[5]: LD_*`,
		`servers.s.env_passthrough[6]: PYTHONPATH`, `servers.s.env_passthrough[7]: LD_LIBRARY_PATH`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	for _, not := range []string{"tokens[1]", "env_passthrough[1]: \"AWS_*\"", "env_passthrough[2]"} {
		if strings.Contains(all, "servers.s."+not) || strings.Contains(all, "auth."+not) {
			t.Errorf("a warning about %s:\n%s", not, all)
		}
	}
}
