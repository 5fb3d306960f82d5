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

// call -c does not narrow the start to a server when a skill (with tools)
// or a plugin of the plugins dirs is named like the server's namespace:
// the tool may be theirs, so everything starts.
func TestCallSeesSkillsAndPlugins(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	bin := buildSkillgate(t)
	argv := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.started")
	writeFiles(t, dir, map[string]string{
		"skills/everything/SKILL.md":              "---\nname: everything\ndescription: Greets.\n---\n# everything\n",
		"skills/everything/tools/greet/tool.yaml": "name: greet\ndescription: Greet.\nruntime: bash\nentry: greet.sh\n",
		"skills/everything/tools/greet/greet.sh":  "echo hello from the skill\n",
	})
	servers := func(ns string) string {
		return `servers:
  everything:
    command: ` + argv[0] + `
    args: [` + strings.Join(argv[1:], ", ") + `]
    namespace: ` + ns + `
  broken:
    command: sh
    args: ["-c", "touch ` + broken + `; exit 3"]
`
	}

	// A skill's tool in the server's namespace.
	cfg := filepath.Join(dir, "skills.yaml")
	writeFile(t, cfg, servers("everything")+"skills: {dirs: [./skills]}\n")
	out, stderr, code := runBin(t, bin, "call", "everything__greet", "-c", cfg)
	if code != 0 || !strings.Contains(out, "hello from the skill") {
		t.Fatalf("call everything__greet (the skill's): exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(broken); err != nil {
		t.Errorf("call everything__greet did not start everything (the server broken)")
	}
	// The server's own tool is still called, with everything started.
	os.Remove(broken)
	if out, stderr, code := runBin(t, bin, "call", "everything__echo", "--arg", "message=hi", "-c", cfg); code != 0 || !strings.Contains(out, "Echo: hi") {
		t.Fatalf("call everything__echo next to the skill: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(broken); err != nil {
		t.Errorf("call everything__echo next to the skill everything did not start everything")
	}

	// A plugin file named like the server's namespace.
	os.Remove(broken)
	writeFiles(t, dir, map[string]string{"plugins/ev.sh": "#!/bin/sh\nexit 1\n"})
	if err := os.Chmod(filepath.Join(dir, "plugins", "ev.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "plugins.yaml")
	writeFile(t, cfg, servers("ev")+"plugins: {dirs: [./plugins]}\n")
	if out, stderr, code := runBin(t, bin, "call", "ev__echo", "--arg", "message=hi", "-c", cfg); code != 0 || !strings.Contains(out, "Echo: hi") {
		t.Fatalf("call ev__echo next to the plugin ev: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(broken); err != nil {
		t.Errorf("call ev__echo next to the plugin ev did not start everything")
	}
}

func TestNarrowToServer(t *testing.T) {
	ns := func(s string) *string { return &s }
	for _, c := range []struct {
		name, tool, want string
		sep              string
		servers          map[string]*config.Server
		others           []string
	}{
		{"its namespace", "a__x", "a", "", map[string]*config.Server{"a": {}, "b": {}}, nil},
		{"a namespace of its own", "web__x", "a", "", map[string]*config.Server{"a": {Namespace: ns("web")}, "web2": {}}, nil},
		{"the separator", "a--x", "a", "--", map[string]*config.Server{"a": {}, "b": {}}, nil},
		{"not with another separator", "a__x", "", "--", map[string]*config.Server{"a": {}, "b": {}}, nil},
		{"no server's", "pipelines__x", "", "", map[string]*config.Server{"a": {}, "b": {}}, nil},
		{"a server without namespace", "a__x", "", "", map[string]*config.Server{"a": {}, "b": {Namespace: ns("")}}, nil},
		{"two namespaces prefix it", "a__b__x", "", "", map[string]*config.Server{"a": {}, "a__b": {}}, nil},
		{"a disabled server does not count", "a__x", "a", "", map[string]*config.Server{"a": {}, "b": {Namespace: ns(""), Disabled: true}}, nil},
		{"a plugin or skill of its namespace", "web__x", "", "", map[string]*config.Server{"a": {Namespace: ns("web")}, "b": {}}, []string{"web"}},
		{"a plugin or skill of a longer namespace", "a__b__x", "", "", map[string]*config.Server{"a": {}, "b": {}}, []string{"a__b"}},
		{"other plugins and skills do not count", "a__x", "a", "", map[string]*config.Server{"a": {}, "b": {}}, []string{"b", "ab", "a_"}},
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
			if got := narrowToServer(cfg, c.tool, c.others); got != c.want {
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
