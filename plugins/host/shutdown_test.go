//go:build linux

package host_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/mcp"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestBuiltinShutdownFitsKillWindow closes a built-in mcp executor (served
// by ServeBuiltin, as `skillgate plugin serve mcp`) that runs a stdio
// server which ignores stdin EOF and a helper of the server's that left
// its session and ignores SIGTERM. The executor's ordered shutdown of the
// server (stdin, then SIGTERM at half its default 5 s grace) must end
// before the kill window does, with the default window and with a window
// shorter than the grace (the grace is shortened to fit): the server gets
// SIGTERM rather than being SIGKILLed with the executor, and its helper
// dies too.
func TestBuiltinShutdownFitsKillWindow(t *testing.T) {
	// The SDK keeps a quarter of the window, a second at most, for exiting.
	if reserve := min(host.DefaultKillWindow/4, time.Second); host.DefaultKillWindow-reserve <= mcp.DefaultShutdownGrace {
		t.Fatalf("the default kill window (%v) leaves no room for the default shutdown grace (%v)", host.DefaultKillWindow, mcp.DefaultShutdownGrace)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		window time.Duration // 0: the default
	}{
		{"default kill window", 0},
		{"kill window shorter than the grace", 1200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			sink := newLogSink()
			sink.dumpOnFailure(t)
			dir := t.TempDir()
			termFile, helperFile := filepath.Join(dir, "term"), filepath.Join(dir, "helper")
			p := startPlugin(t, helperSpec(t, "builtin-mcp"), host.Options{Logger: slog.New(sink), KillWindow: tc.window})
			spec, _ := json.Marshal(map[string]any{"command": exe, "env": map[string]string{
				envMode: "mcpserver", envTermFile: termFile, envHelperPID: helperFile, "GORACE": "atexit_sleep_ms=0",
			}})
			if _, err := p.Load(context.Background(), sdk.LoadRequest{Source: "stub", Kind: mcp.Kind, Spec: spec}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(helperFile)
			helper, _ := strconv.Atoi(string(data))
			if err != nil || !testenv.Alive(helper) {
				t.Fatalf("the server's helper is not running: %q, %v", data, err)
			}
			t.Cleanup(func() { _ = syscall.Kill(helper, syscall.SIGKILL) })

			window := tc.window
			if window == 0 {
				window = host.DefaultKillWindow
			}
			start := time.Now()
			_ = p.Close()
			if d := time.Since(start); d >= window {
				t.Errorf("Close took %v, the whole %v kill window", d, window)
			}
			for _, r := range sink.records() {
				if strings.Contains(r.Msg, "did not exit in time") {
					t.Errorf("the executor was killed: %s %v", r.Msg, r.Attrs)
				}
			}
			if _, err := os.Stat(termFile); err != nil {
				t.Errorf("the server never got SIGTERM (%v): it was killed with its executor", err)
			}
			waitFor(t, 2*time.Second, "the server's helper killed", func() bool { return !testenv.Alive(helper) })
		})
	}
}
