//go:build unix

package sdk

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk/internal/link"

	"github.com/hashicorp/go-plugin"
)

// pluginProcess runs the test binary as a plugin in mode, as a gateway
// would, until it printed the go-plugin handshake.
func pluginProcess(t *testing.T, mode string, env ...string) (cmd *exec.Cmd, stdin io.WriteCloser, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "shutdown")
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envShutdownMode+"="+mode, envShutdownFile+"="+file,
		link.Handshake(ProtocolVersion).MagicCookieKey+"="+link.Handshake(ProtocolVersion).MagicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS="+strconv.Itoa(ProtocolVersion), "GORACE=atexit_sleep_ms=0")
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "|grpc") {
		t.Fatalf("no go-plugin handshake: %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd, stdin, file
}

// waitExit waits for the plugin to exit and returns its status.
func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) syscall.WaitStatus {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("the plugin still runs %v later", within)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// shutdownLeft reads what Shutdown's context had left, failing the test
// when Shutdown was not called.
func shutdownLeft(t *testing.T, file string) time.Duration {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("Shutdown was not called: %v", err)
	}
	ns, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Fatalf("Shutdown's context had no deadline: %q", data)
	}
	return time.Duration(ns)
}

// TestShutdown checks that Serve calls an executor's Shutdown, bounded by
// the kill window less its reserve, however the process ends: on SIGTERM
// and on stdin EOF before it exits (status 0), when the gateway stops it
// before Serve returns.
func TestShutdown(t *testing.T) {
	within := func(t *testing.T, left, window time.Duration) {
		t.Helper()
		if budget := window - shutdownReserve(window); left <= 0 || left > budget {
			t.Errorf("Shutdown had %v left, want up to %v (a %v window less the reserve)", left, budget, window)
		}
	}
	t.Run("SIGTERM", func(t *testing.T) {
		cmd, _, file := pluginProcess(t, "shutdowner", EnvKillWindow+"=3s")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if ws := waitExit(t, cmd, 10*time.Second); ws.Signaled() || ws.ExitStatus() != 0 {
			t.Errorf("exit: %v, want status 0", ws)
		}
		within(t, shutdownLeft(t, file), 3*time.Second)
	})
	t.Run("stdin EOF", func(t *testing.T) {
		cmd, stdin, file := pluginProcess(t, "shutdowner", EnvExitOnStdinEOF+"=1")
		_ = stdin.Close()
		if ws := waitExit(t, cmd, 20*time.Second); ws.Signaled() || ws.ExitStatus() != 0 {
			t.Errorf("exit: %v, want status 0", ws)
		}
		within(t, shutdownLeft(t, file), defaultKillWindow) // no window announced
	})
	t.Run("stopped by the gateway", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "shutdown")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envShutdownMode+"=shutdowner", envShutdownFile+"="+file,
			EnvKillWindow+"=2s", "GORACE=atexit_sleep_ms=0")
		c := plugin.NewClient(&plugin.ClientConfig{
			HandshakeConfig:  link.Handshake(ProtocolVersion),
			VersionedPlugins: versionedPlugins(nil, nil),
			Cmd:              cmd,
			AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
			Stderr:           io.Discard,
		})
		defer c.Kill()
		rpc, err := c.Client()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rpc.Dispense(link.PluginName); err != nil {
			t.Fatal(err)
		}
		c.Kill() // graceful: go-plugin's Shutdown, then a wait for the exit
		if _, err := os.Stat(file + ".returned"); err != nil {
			t.Errorf("Serve did not return after Shutdown: %v", err)
		}
		within(t, shutdownLeft(t, file), 2*time.Second)
	})
	t.Run("Shutdown that does not return", func(t *testing.T) {
		// Serve waits for it no longer than the kill window.
		cmd, _, file := pluginProcess(t, "hang", EnvKillWindow+"=400ms")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if ws := waitExit(t, cmd, 10*time.Second); ws.Signaled() || ws.ExitStatus() != 0 {
			t.Errorf("exit: %v, want status 0", ws)
		}
		within(t, shutdownLeft(t, file), 400*time.Millisecond)
	})
	t.Run("no Shutdowner", func(t *testing.T) {
		// As before the hook: SIGTERM ends the process at once.
		cmd, _, file := pluginProcess(t, "plain")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if ws := waitExit(t, cmd, 10*time.Second); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Errorf("exit: %v, want killed by SIGTERM", ws)
		}
		if _, err := os.Stat(file); err == nil {
			t.Error("Shutdown called on an executor that is no Shutdowner")
		}
	})
}

func TestShutdownReserve(t *testing.T) {
	for _, tc := range []struct{ window, want time.Duration }{
		{400 * time.Millisecond, 100 * time.Millisecond},
		{2 * time.Second, 500 * time.Millisecond},
		{10 * time.Second, time.Second},
		{time.Minute, time.Second},
	} {
		if got := shutdownReserve(tc.window); got != tc.want {
			t.Errorf("shutdownReserve(%v) = %v, want %v", tc.window, got, tc.want)
		}
	}
}
