package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// envPlugin makes the test binary an executor plugin: "hang" one whose
// Load never returns and ignores its context, "ok" one serving the tool hi.
const envPlugin = "SKILLGATE_TEST_PLUGIN"

func init() {
	if mode := os.Getenv(envPlugin); mode != "" {
		sdk.Serve(testPlugin{hang: mode == "hang"})
		os.Exit(0)
	}
}

type testPlugin struct{ hang bool }

func (testPlugin) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "testplugin", Version: "1", Kinds: []string{"test"}}, nil
}

func (p testPlugin) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	if p.hang {
		time.Sleep(time.Hour)
	}
	return sdk.Definitions{Tools: []json.RawMessage{json.RawMessage(`{"name":"hi","inputSchema":{"type":"object"}}`)}}, nil
}

func (testPlugin) Unload(context.Context, string) error { return nil }

func (testPlugin) Call(context.Context, sdk.CallRequest, sdk.Call) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`), nil
}

// tools list of a config with a plugin whose Load hangs returns once
// limits.load_timeout passes: it lists the other plugin's tool, says which
// one failed and why, and leaves no process behind.
func TestToolsListWithHangingPlugin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plugin := func(name, mode string) string {
		return "#!/bin/sh\n" + envPlugin + "=" + mode + " GORACE=atexit_sleep_ms=0 exec " + strconv.Quote(self) + "\n"
	}
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml": "plugins: {dirs: [./plugins]}\nlimits: {load_timeout: 1s, plugin_kill_window: 1s}\n",
		"plugins/hang":   plugin("hang", "hang"),
		"plugins/ok":     plugin("ok", "ok"),
	})
	for _, name := range []string{"hang", "ok"} {
		if err := os.Chmod(filepath.Join(dir, "plugins", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		out, errOut string
		err         error
	}
	done := make(chan result, 1)
	go func() {
		// The gateway's log goes to stderr from its goroutines while the
		// command writes there too: a buffer safe for that.
		cmd := newRootCmd()
		var out bytes.Buffer
		errOut := &testenv.Buffer{}
		cmd.SetOut(&out)
		cmd.SetErr(errOut)
		cmd.SetArgs([]string{"-c", filepath.Join(dir, "skillgate.yaml"), "tools", "list"})
		err := cmd.ExecuteContext(context.Background())
		done <- result{out.String(), errOut.String(), err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("tools list still runs 90s after it started, with load_timeout 1s")
	}
	if !strings.Contains(res.out, "ok__hi") {
		t.Errorf("tools list lacks ok__hi (err %v):\n%s\n%s", res.err, res.out, res.errOut)
	}
	if want := `executor "hang" did not answer Load within 1s`; !strings.Contains(res.errOut, want) {
		t.Errorf("tools list does not say %q:\n%s", want, res.errOut)
	}
	// Told once: by the notice, not also by the plugin host's log.
	if lines := strings.Split(strings.TrimSpace(res.errOut), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "plugin hang failed: ") {
		t.Errorf("tools list tells of the hanging plugin in other words than one line \"plugin hang failed: ...\":\n%s", res.errOut)
	}
	testenv.WaitNoChildren(t, 30*time.Second)
}

// tools list tells of a plugin that failed as of a server that failed:
// one line on stderr, after the list, naming it by its kind, and the same
// exit status (0: the list is printed; `servers` exits 3). The plugin's
// line names its file once and says what to do; the log does not tell
// the failure again. A plugin the gateway refused to run (its name is
// taken) is named as its file is.
func TestToolsListFailedPlugin(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"server.yaml":    "servers:\n  broken:\n    command: sh\n    args: [\"-c\", \"echo cannot open the database >&2; exit 3\"]\n",
		"plugin.yaml":    "plugins: {dirs: [./plugins]}\n",
		"plugins/broken": "#!/bin/sh\necho cannot read my settings >&2\nexit 1\n",
		"garbage.yaml":   "plugins: {dirs: [./garbage]}\n",
		"garbage/broken": "#!/bin/sh\necho I am no plugin\nsleep 60\n",
		"refused.yaml":   "plugins: {dirs: [./refused]}\n",
		"refused/admin":  "#!/bin/sh\nexit 1\n",
	})
	for _, f := range []string{"plugins/broken", "garbage/broken", "refused/admin"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildSkillgate(t)
	for _, args := range [][]string{{"tools", "list"}, {"tools", "list", "--json"}} {
		_, serverErr, serverCode := runBin(t, bin, append(args, "-c", filepath.Join(dir, "server.yaml"))...)
		if !strings.HasPrefix(serverErr, "server broken failed: ") {
			t.Fatalf("%v with a failed server: stderr %q", args, serverErr)
		}
		for _, tc := range []struct {
			config, path, prefix, cause, suffix string
		}{
			// It exits before the handshake: the gateway tries again.
			{"plugin.yaml", "plugins/broken", "plugin broken failed: ", "cannot read my settings", "; fix the executor plugin %s or take it out of plugins.dirs"},
			// It is no plugin: the host gives up on the file at once.
			{"garbage.yaml", "garbage/broken", "plugin broken failed: ", "I am no plugin", "; fix the executor plugin %s or take it out of plugins.dirs"},
			{"refused.yaml", "refused/admin", "plugin admin failed: %s: ", `its name "admin" is the namespace of the gateway's own tools`, ""},
		} {
			path := filepath.Join(dir, tc.path)
			out, stderr, code := runBin(t, bin, append(args, "-c", filepath.Join(dir, tc.config))...)
			if code != serverCode || !strings.Contains(out, "admin__servers") {
				t.Errorf("%v -c %s: exit %d, want %d as with a failed server; stdout:\n%s", args, tc.config, code, serverCode, out)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			prefix, suffix := fillPath(tc.prefix, path), fillPath(tc.suffix, path)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], prefix) || !strings.Contains(lines[0], tc.cause) ||
				!strings.HasSuffix(lines[0], suffix) || strings.Count(lines[0], path) != 1 {
				t.Errorf("%v -c %s: stderr is not one line starting %q, naming the cause %q and the file once, and ending %q:\n%s",
					args, tc.config, prefix, tc.cause, suffix, stderr)
			}
		}
	}
}

// fillPath puts path in place of the %s of format, if it has one.
func fillPath(format, path string) string { return strings.Replace(format, "%s", path, 1) }

// hangingPluginDir writes into dir a plugins folder with two plugins
// re-executing the test binary: hang, whose Load never returns, and ok,
// serving ok__hi, and a skillgate.yaml serving it with limits.
func hangingPluginDir(t *testing.T, dir, limits string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plugin := func(mode string) string {
		return "#!/bin/sh\n" + envPlugin + "=" + mode + " GORACE=atexit_sleep_ms=0 exec " + strconv.Quote(self) + "\n"
	}
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml": "plugins: {dirs: [./plugins]}\nlimits: " + limits + "\n",
		"plugins/hang":   plugin("hang"),
		"plugins/ok":     plugin("ok"),
	})
	for _, name := range []string{"hang", "ok"} {
		if err := os.Chmod(filepath.Join(dir, "plugins", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "skillgate.yaml")
}

// runInProcess runs the CLI with args in this process and returns its
// stdout, stderr and error, failing the test when it has not returned
// within limit.
func runInProcess(t *testing.T, limit time.Duration, args ...string) (string, string, error) {
	t.Helper()
	type result struct {
		out, errOut string
		err         error
	}
	done := make(chan result, 1)
	go func() {
		cmd := newRootCmd()
		var out bytes.Buffer
		errOut := &testenv.Buffer{} // the gateway logs from its goroutines
		cmd.SetOut(&out)
		cmd.SetErr(errOut)
		cmd.SetArgs(args)
		err := cmd.ExecuteContext(context.Background())
		done <- result{out.String(), errOut.String(), err}
	}()
	select {
	case res := <-done:
		return res.out, res.errOut, res.err
	case <-time.After(limit):
		t.Fatalf("%v still runs after %s", args, limit)
		return "", "", nil
	}
}

// call from the config calls its tool as soon as the source that serves
// it is ready: a plugin whose Load hangs (load_timeout 1h) does not hold
// it. A tool that no source serves is told once every source had its
// first load, with the names it may have meant.
func TestCallDoesNotWaitForHangingPlugin(t *testing.T) {
	cfg := hangingPluginDir(t, t.TempDir(), "{load_timeout: 1h, plugin_kill_window: 1s}")
	out, errOut, err := runInProcess(t, 2*time.Minute, "-c", cfg, "call", "ok__hi")
	if err != nil || !strings.Contains(out, `"text": "hi"`) || errOut != "" {
		t.Errorf("call ok__hi: %v, stdout:\n%s\nstderr:\n%s\nwant the result and nothing on stderr", err, out, errOut)
	}
	testenv.WaitNoChildren(t, 30*time.Second)

	cfg = hangingPluginDir(t, t.TempDir(), "{load_timeout: 1s, plugin_kill_window: 1s}")
	_, errOut, err = runInProcess(t, 2*time.Minute, "-c", cfg, "call", "ok__hj")
	if err == nil || !strings.Contains(err.Error(), "did you mean ok__hi?") {
		t.Errorf("call ok__hj: %v, want the unknown tool with ok__hi suggested\nstderr:\n%s", err, errOut)
	}
	testenv.WaitNoChildren(t, 30*time.Second)

	// The gateway's own tools tell of the other sources: they are called
	// once every source had its first load.
	out, errOut, err = runInProcess(t, 2*time.Minute, "-c", cfg, "call", "admin__servers")
	if err != nil || !strings.Contains(out, "hang (hang): failed") || !strings.Contains(out, "ok (ok): ready") {
		t.Errorf("call admin__servers: %v, want hang failed and ok ready; stdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	testenv.WaitNoChildren(t, 30*time.Second)
}

// validate lists the plugin files it found, which it does not run, next
// to the files it would not run and why.
func TestValidateListsPlugins(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml":  "plugins: {dirs: [./plugins]}\n",
		"plugins/good":    "#!/bin/sh\n",
		"plugins/loose":   "#!/bin/sh\n",
		"plugins/notexec": "",
	})
	for name, mode := range map[string]os.FileMode{"good": 0o755, "loose": 0o757} {
		if err := os.Chmod(filepath.Join(dir, "plugins", name), mode); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, err := runCLI(t, "validate", filepath.Join(dir, "skillgate.yaml"))
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr)
	}
	plugins := filepath.Join(dir, "plugins")
	for _, want := range []string{
		"plugin good: " + filepath.Join(plugins, "good") + " (found; validate does not run it",
		"warning: plugin " + filepath.Join(plugins, "loose") + ": " + filepath.Join(plugins, "loose") + " is writable by every user",
		"warning: plugin " + filepath.Join(plugins, "notexec") + ": not executable",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "plugin loose: ") || strings.Contains(stderr, "plugin notexec: ") {
		t.Errorf("validate lists a plugin it would not run as found:\n%s", stderr)
	}
}

// validate --json lists the plugin files it found, as its text output
// does: each one's name and path, and none of the files it would not run;
// a config without plugins has an empty list.
func TestValidateJSONListsPlugins(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skillgate.yaml":  "plugins: {dirs: [./plugins]}\n",
		"none.yaml":       "servers: {a: {command: echo}}\n",
		"plugins/good":    "#!/bin/sh\n",
		"plugins/notexec": "",
	})
	if err := os.Chmod(filepath.Join(dir, "plugins", "good"), 0o755); err != nil {
		t.Fatal(err)
	}
	type plugin struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	list := func(cfg string) []plugin {
		t.Helper()
		out, stderr, err := runCLI(t, "validate", "--json", filepath.Join(dir, cfg))
		if err != nil || stderr != "" {
			t.Fatalf("validate --json %s: %v, stderr %q", cfg, err, stderr)
		}
		var env struct {
			Plugins *[]plugin `json:"plugins"`
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil || env.Plugins == nil {
			t.Fatalf("validate --json %s: no plugins list (%v):\n%s", cfg, err, out)
		}
		return *env.Plugins
	}
	want := []plugin{{"good", filepath.Join(dir, "plugins", "good")}}
	if got := list("skillgate.yaml"); !slices.Equal(got, want) {
		t.Errorf("validate --json lists the plugins %+v, want %+v", got, want)
	}
	if got := list("none.yaml"); len(got) != 0 {
		t.Errorf("validate --json of a config without plugins lists %+v", got)
	}
}
