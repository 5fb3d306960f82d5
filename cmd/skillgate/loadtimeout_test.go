package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
