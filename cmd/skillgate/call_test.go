package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// call -c starts only the server whose namespace prefixes the tool: a
// broken or slow server of the config is not started, so it cannot delay
// or spoil the call. Unless another server may serve the tool too (one
// with namespace ""): then everything starts.
func TestCallStartsOnlyItsServer(t *testing.T) {
	bin := buildSkillgate(t)
	argv := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	started := func(name string) string { return filepath.Join(dir, name+".started") }
	// Each other server leaves a file when it is started, then fails.
	marker := func(name, extra string) string {
		return `
  ` + name + `:
    command: sh
    args: ["-c", "touch ` + started(name) + `; echo cannot open the database >&2; exit 3"]` + extra
	}
	writeFiles(t, dir, map[string]string{"pipelines/over_broken.yaml": `description: calls the broken server
steps:
  - {id: a, tool: broken__query}
`})
	base := `servers:
  everything:
    command: ` + argv[0] + `
    args: [` + strings.Join(argv[1:], ", ") + `]` + marker("broken", "") + `
pipelines: {dirs: [./pipelines]}
`
	cfg := filepath.Join(dir, "skillgate.yaml")
	writeFile(t, cfg, base)
	out, stderr, code := runBin(t, bin, "call", "everything__echo", "--arg", "message=hi", "-c", cfg)
	if code != 0 || !strings.Contains(out, "Echo: hi") || stderr != "" {
		t.Fatalf("call everything__echo: exit %d, stdout %q, stderr %q; want 0, the echo and nothing on stderr", code, out, stderr)
	}
	if _, err := os.Stat(started("broken")); err == nil {
		t.Errorf("call everything__echo started the server broken too")
	}

	// A pipeline's tool needs everything.
	_, stderr, _ = runBin(t, bin, "call", "pipelines__over_broken", "-c", cfg)
	if _, err := os.Stat(started("broken")); err != nil {
		t.Errorf("call pipelines__over_broken did not start the server broken (stderr %q)", stderr)
	}

	// A server without a namespace may serve everything__echo as well.
	anon := filepath.Join(dir, "anon.yaml")
	writeFile(t, anon, strings.Replace(base, "\npipelines:", marker("anon", "\n    namespace: \"\"")+"\npipelines:", 1))
	out, stderr, code = runBin(t, bin, "call", "everything__echo", "--arg", "message=hi", "-c", anon)
	if code != 0 || !strings.Contains(out, "Echo: hi") {
		t.Fatalf("call with a server without namespace: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(started("anon")); err != nil {
		t.Errorf("call everything__echo did not start the server anon, which has no namespace")
	}
}

func TestNarrowToServer(t *testing.T) {
	ns := func(s string) *string { return &s }
	for _, c := range []struct {
		name, tool, want string
		sep              string
		servers          map[string]*config.Server
	}{
		{"its namespace", "a__x", "a", "", map[string]*config.Server{"a": {}, "b": {}}},
		{"a namespace of its own", "web__x", "a", "", map[string]*config.Server{"a": {Namespace: ns("web")}, "web2": {}}},
		{"the separator", "a--x", "a", "--", map[string]*config.Server{"a": {}, "b": {}}},
		{"not with another separator", "a__x", "", "--", map[string]*config.Server{"a": {}, "b": {}}},
		{"no server's", "pipelines__x", "", "", map[string]*config.Server{"a": {}, "b": {}}},
		{"a server without namespace", "a__x", "", "", map[string]*config.Server{"a": {}, "b": {Namespace: ns("")}}},
		{"two namespaces prefix it", "a__b__x", "", "", map[string]*config.Server{"a": {}, "a__b": {}}},
		{"a disabled server does not count", "a__x", "a", "", map[string]*config.Server{"a": {}, "b": {Namespace: ns(""), Disabled: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			if c.sep != "" {
				cfg.Names.Separator = c.sep
			}
			cfg.Servers = maps.Clone(c.servers)
			cfg.ServerOrder = nil
			for name := range c.servers {
				cfg.ServerOrder = append(cfg.ServerOrder, name)
			}
			cfg.Pipelines.Dirs = []string{"p"}
			if got := narrowToServer(cfg, c.tool); got != c.want {
				t.Fatalf("narrowToServer(%s) = %q, want %q", c.tool, got, c.want)
			}
			for name, sv := range cfg.Servers {
				wasOff := c.servers[name].Disabled
				if want := wasOff || (c.want != "" && name != c.want); sv.Disabled != want {
					t.Errorf("server %s: disabled %v, want %v", name, sv.Disabled, want)
				}
			}
			if kept := len(cfg.Pipelines.Dirs) > 0; kept != (c.want == "") {
				t.Errorf("pipelines dirs kept: %v", kept)
			}
		})
	}
}

// One-shot commands leave the gateway's name collision records out: they
// would come on every run; tools list prints the collisions itself.
// --log-level brings them back.
func TestOneShotLeavesOutCollisions(t *testing.T) {
	bin := buildSkillgate(t)
	argv := testenv.NodeServer(t, "server-everything")
	server := `
    command: ` + argv[0] + `
    args: [` + strings.Join(argv[1:], ", ") + `]`
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, "servers:\n  everything:"+server+"\n  twin:"+server+"\n    namespace: everything\n")
	for _, args := range [][]string{{"call", "everything__echo", "--arg", "message=hi"}, {"tools", "list"}} {
		_, stderr, code := runBin(t, bin, append(args, "-c", cfg)...)
		if code != 0 || strings.Contains(stderr, "name collision") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant 0 and no name collision records", args, code, stderr)
		}
		if args[0] == "tools" && !strings.Contains(stderr, `conflict: tool "everything__echo": everything wins over twin (renamed to twin__echo)`) {
			t.Errorf("tools list: no conflict line for everything__echo:\n%s", stderr)
		}
	}
	_, stderr, _ := runBin(t, bin, "call", "everything__echo", "--arg", "message=hi", "-c", cfg, "--log-level", "info")
	if !strings.Contains(stderr, `msg="name collision" kind=tool name=everything__echo`) {
		t.Errorf("call --log-level info: no name collision record:\n%s", stderr)
	}
}
