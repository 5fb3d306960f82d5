package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseForRun: a ${VAR} that is not set inside a server entry fails
// that server only, for the gateway; anywhere else it is an error as for
// Parse, which stays strict (skillgate validate), and then every problem
// is reported.
func TestParseForRun(t *testing.T) {
	const servers = "servers:\n" +
		"  ok: {command: node}\n" +
		"  github:\n" +
		"    command: npx\n" +
		"    args: ['-y', '${PKG}']\n" +
		"    env: {GITHUB_PERSONAL_ACCESS_TOKEN: '${GITHUB_TOKEN}'}\n"
	cfg, err := ParseForRun(strings.NewReader(servers), "f.yaml", nil)
	if err != nil {
		t.Fatalf("ParseForRun: %v", err)
	}
	if p := cfg.Servers["ok"].Problem; p != nil {
		t.Errorf("ok has a problem: %v", p)
	}
	p := cfg.Servers["github"].Problem
	if p == nil || !errors.Is(p, ErrUndefinedVariable) {
		t.Fatalf("github's problem = %v, want one wrapping ErrUndefinedVariable", p)
	}
	for _, want := range []string{
		"f.yaml:5:18: servers.github.args[1]: undefined variable ${PKG}",
		"f.yaml:6:41: servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN: undefined variable ${GITHUB_TOKEN}; set GITHUB_TOKEN in the environment",
		"skillgate reads variables from the environment it was started in; restart skillgate after setting one",
	} {
		if !strings.Contains(p.Error(), want) {
			t.Errorf("github's problem lacks %q:\n%v", want, p)
		}
	}
	// Desktop clients start the gateway over stdio: only there does the hint speak of them.
	if strings.Contains(p.Error(), "desktop client") {
		t.Errorf("over HTTP, github's problem speaks of desktop clients:\n%v", p)
	}
	if cfg, err := ParseForStdio(strings.NewReader(servers), "f.yaml", nil); err != nil ||
		!strings.Contains(cfg.Servers["github"].Problem.Error(), "a desktop client passes only the env: of its entry for skillgate") {
		t.Errorf("ParseForStdio = %v; want github's problem to say what a desktop client passes", err)
	}
	if i, j := strings.Index(p.Error(), "${PKG}"), strings.Index(p.Error(), "${GITHUB_TOKEN}"); i > j {
		t.Errorf("the problems are not in file order: %v", p)
	}
	if _, err := Parse(strings.NewReader(servers), "f.yaml", nil); !errors.Is(err, ErrUndefinedVariable) {
		t.Errorf("Parse = %v, want the undefined variables as errors", err)
	}

	for _, tt := range []struct{ name, yaml, want string }{
		{"outside a server", "auth: {tokens: ['${TOKEN}']}\n" + servers, "f.yaml:1:17: auth.tokens[0]: undefined variable ${TOKEN}"},
		{"with another problem", servers + "limits: {start_wait: soon}\n", `limits.start_wait: "soon" is not a duration`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseForRun(strings.NewReader(tt.yaml), "f.yaml", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseForRun = %v, want an error with %q", err, tt.want)
			}
			// Every problem at once, the server's variables too.
			if !strings.Contains(err.Error(), "servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN: undefined variable") {
				t.Errorf("the error leaves out the server's unset variable:\n%v", err)
			}
		})
	}
}

// TestLoadForRun is TestParseForRun through a file and the environment.
func TestLoadForRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skillgate.yaml")
	if err := os.WriteFile(path, []byte("servers:\n  a: {command: node}\n  b: {url: '${SKILLGATE_TEST_UNSET_URL}'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadForRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Servers["b"].Problem; p == nil || !strings.Contains(p.Error(), path+":3:12: servers.b.url: undefined variable ${SKILLGATE_TEST_UNSET_URL}") {
		t.Errorf("b's problem = %v", p)
	}
	if _, err := Load(path); err == nil {
		t.Error("Load accepted an unset variable")
	}
}

// TestServerType reads type, as MCP clients write it, into transport.
func TestServerType(t *testing.T) {
	for _, tt := range []struct{ entry, transport, kind string }{
		{"{type: stdio, command: x}", "stdio", "stdio"},
		{"{type: http, url: 'https://h/mcp'}", "", "http"},
		{"{type: streamableHttp, url: 'https://h/mcp'}", "", "http"},
		{"{type: streamable-http, url: 'https://h/mcp'}", "streamable-http", "http"},
		{"{type: sse, url: 'https://h/sse'}", "sse", "sse"},
	} {
		cfg, err := Parse(strings.NewReader("servers:\n  s: "+tt.entry+"\n"), "f.yaml", nil)
		if err != nil {
			t.Errorf("%s: %v", tt.entry, err)
			continue
		}
		if s := cfg.Servers["s"]; s.Transport != tt.transport || s.Kind() != tt.kind {
			t.Errorf("%s: transport %q, kind %q; want %q, %q", tt.entry, s.Transport, s.Kind(), tt.transport, tt.kind)
		}
	}
}

// TestWarnings reports the commands that would not start here.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for path, mode := range map[string]os.FileMode{filepath.Join(bin, "mcp-real"): 0o755, filepath.Join(dir, "srv"): 0o755, filepath.Join(dir, "data.txt"): 0o644} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"relative/bin")
	name := filepath.Join(dir, "skillgate.yaml")
	yaml := "servers:\n" +
		"  found: {command: mcp-real}\n" +
		"  missing: {command: mcp-server-does-not-exist}\n" +
		"  own-path: {command: mcp-real, env: {PATH: /nowhere}}\n" +
		"  rel-ok: {command: ./srv}\n" +
		"  rel-missing: {command: ./nothere}\n" +
		"  not-exec: {command: ./data.txt}\n" +
		"  folder: {command: ./bin}\n" +
		"  no-cwd: {command: mcp-real, cwd: gone}\n" +
		"  off: {command: ./nothere, disabled: true}\n" +
		"  boxed: {image: 'mcp/x:1'}\n" +
		"  remote: {url: 'https://h/mcp'}\n"
	cfg, err := Parse(strings.NewReader(yaml), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings() {
		got = append(got, strings.TrimPrefix(w.Error(), name+":"))
	}
	want := []string{
		`3:22: servers.missing.command: "mcp-server-does-not-exist" is not found in PATH here (` + bin + string(os.PathListSeparator) + "relative/bin); install it",
		`4:23: servers.own-path.command: "mcp-real" is not found in its env.PATH (/nowhere)`,
		"6:26: servers.rel-missing.command: " + filepath.Join(dir, "nothere") + " does not exist here",
		"7:23: servers.not-exec.command: " + filepath.Join(dir, "data.txt") + " is not executable",
		"8:21: servers.folder.command: " + filepath.Join(dir, "bin") + " is a folder",
		"9:36: servers.no-cwd.cwd: " + filepath.Join(dir, "gone") + " is not a folder here",
	}
	if len(got) != len(want) {
		t.Fatalf("warnings:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d:\n got %s\nwant %s...", i, got[i], want[i])
		}
	}
}
