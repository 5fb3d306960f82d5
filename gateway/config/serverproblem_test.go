package config

import (
	"errors"
	"strings"
	"testing"
)

// TestParseForRunServerProblems: for the gateway, any problem confined to
// one servers entry (an unknown key, a bad value, an invalid or reserved
// name) fails that server only, with file:line; the others run. Parse
// (skillgate validate) still reports each as an error, and a problem
// outside servers still fails the whole config, every problem listed.
func TestParseForRunServerProblems(t *testing.T) {
	const yaml = "servers:\n" +
		"  ok: {command: node}\n" +
		"  memory: {command: node, arg: [server.js]}\n" +
		"  my.server: {command: node}\n" +
		"  late: {command: node, start: never, timeout: soon}\n" +
		"  pipelines: {command: node}\n" +
		"  scalar: 5\n"
	cfg, err := ParseForRun(strings.NewReader(yaml), "f.yaml", nil)
	if err != nil {
		t.Fatalf("ParseForRun: %v", err)
	}
	if p := cfg.Servers["ok"].Problem; p != nil {
		t.Errorf("ok has a problem: %v", p)
	}
	for name, want := range map[string]string{
		"memory":    `f.yaml:3:27: servers.memory.arg: unknown key; did you mean "args"?`,
		"my.server": `f.yaml:4:3: servers.my.server: server name "my.server" must be 1-64 letters, digits, _ or -; rename it`,
		"late":      `f.yaml:5:32: servers.late.start: unknown value "never"; use eager or lazy (or leave it out); f.yaml:5:48: servers.late.timeout: `,
		"pipelines": `f.yaml:6:3: servers.pipelines: server name "pipelines" is taken by the gateway's own tools`,
		"scalar":    `f.yaml:7:11: servers.scalar: `,
	} {
		p := cfg.Servers[name].Problem
		if p == nil || !strings.HasPrefix(p.Error(), want) {
			t.Errorf("%s's problem = %v; want %q...", name, p, want)
		}
		if OnlyUnset(p) || strings.Contains(p.Error(), varsHint) {
			t.Errorf("%s's problem is taken for an unset variable: %v", name, p)
		}
	}
	_, err = Parse(strings.NewReader(yaml), "f.yaml", nil)
	var ce *Error
	if err == nil || !errors.As(err, &ce) || strings.Count(err.Error(), "\n") != 5 {
		t.Errorf("Parse = %v; want the six problems as errors", err)
	}

	// Outside servers, a problem is still fatal, and the servers' are listed with it.
	_, err = ParseForRun(strings.NewReader(yaml+"listen: {http: nowhere}\n"), "f.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "listen.http") || !strings.Contains(err.Error(), "servers.memory.arg") {
		t.Errorf("ParseForRun with a bad listen = %v; want an error naming listen.http and servers.memory.arg", err)
	}

	// A field two server names could hold counts for both: a, whose env
	// has an unset variable, is no server to start with a.env's problem
	// left out.
	cfg, err = ParseForRun(strings.NewReader("servers:\n  a: {command: node, env: {X: '${UNSET_X}'}}\n  a.env: {command: node}\n"), "f.yaml", nil)
	if err != nil {
		t.Fatalf("ParseForRun: %v", err)
	}
	if p := cfg.Servers["a"].Problem; p == nil || !strings.Contains(p.Error(), "servers.a.env.X: undefined variable ${UNSET_X}") {
		t.Errorf("a's problem = %v; want its unset variable", p)
	}
	if p := cfg.Servers["a.env"].Problem; p == nil || !strings.Contains(p.Error(), `server name "a.env"`) {
		t.Errorf("a.env's problem = %v; want its name", p)
	}
}
