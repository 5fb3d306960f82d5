//go:build unix

package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk/internal/link"

	"github.com/hashicorp/go-hclog"
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

// syncBuffer collects output from several goroutines.
type syncBuffer struct {
	mu      sync.Mutex
	buf     strings.Builder
	written chan struct{} // one slot: "something was written"
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{written: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.written <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor reports whether s was written within d.
func (b *syncBuffer) waitFor(s string, d time.Duration) bool {
	timeout := time.After(d)
	for !strings.Contains(b.String(), s) {
		select {
		case <-b.written:
		case <-timeout:
			return false
		}
	}
	return true
}

// bufferHost is a Host that writes what it is given into a buffer.
type bufferHost struct{ out *syncBuffer }

func (h bufferHost) Log(_ context.Context, level, msg string, attrs map[string]string) error {
	fmt.Fprintf(h.out, "host log: %s %s k=%s\n", level, msg, attrs["k"])
	return nil
}

// TestShutdownOutputReachesTheGateway checks that what an executor writes
// to stderr and logs through the Host during Shutdown reaches a gateway
// that reads the plugin's stderr until it exits, as the gateway's plugin
// host does: when the gateway stops the plugin (its connection, and with
// it go-plugin's copy of stdout and stderr, is gone by then) and on
// SIGTERM (the process exits right after Shutdown).
func TestShutdownOutputReachesTheGateway(t *testing.T) {
	for _, how := range []string{"stopped by the gateway", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			out := newSyncBuffer()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envShutdownMode+"=talker", EnvKillWindow+"=5s", "GORACE=atexit_sleep_ms=0")
			c := plugin.NewClient(&plugin.ClientConfig{
				HandshakeConfig:  link.Handshake(ProtocolVersion),
				VersionedPlugins: versionedPlugins(nil, bufferHost{out}),
				Cmd:              cmd,
				AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
				Stderr:           out, // the process's own stderr
				SyncStderr:       out, // what go-plugin relays over its connection
				SyncStdout:       out,
				Logger:           hclog.NewNullLogger(),
			})
			defer c.Kill()
			rpc, err := c.Client()
			if err != nil {
				t.Fatal(err)
			}
			raw, err := rpc.Dispense(link.PluginName)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.(*client).Info(context.Background()); err != nil { // hands over the Host
				t.Fatal(err)
			}
			if how == "SIGTERM" {
				// The process exits right after Shutdown returns, while
				// the connection is still up.
				_ = cmd.Process.Signal(syscall.SIGTERM)
				if !out.waitFor("talker: stderr as Shutdown ends", 20*time.Second) {
					t.Errorf("Shutdown's last line did not arrive within 20s of SIGTERM")
				}
			}
			c.Kill() // returns once the process exited and its stderr was read to the end
			got := out.String()
			for _, want := range []string{"talker: stderr as Shutdown begins", "talker: stderr as Shutdown ends"} {
				if !strings.Contains(got, want) {
					t.Errorf("the gateway did not get %q; it got:\n%s", want, got)
				}
			}
			if !hostLogged(got, "warn", "talker: host log during Shutdown", "v") {
				t.Errorf("the gateway did not get Shutdown's Host.Log record; it got:\n%s", got)
			}
			if strings.Contains(got, "host log failed") {
				t.Errorf("Host.Log failed during Shutdown:\n%s", got)
			}
		})
	}
}

// hostLogged reports whether out holds a Host.Log record, as bufferHost
// wrote it or as a JSON line on the plugin's stderr, which the gateway
// logs with its level, message and attributes.
func hostLogged(out, level, msg, k string) bool {
	if strings.Contains(out, fmt.Sprintf("host log: %s %s k=%s\n", level, msg, k)) {
		return true
	}
	for line := range strings.Lines(out) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["@level"] == level && rec["@message"] == msg && rec["k"] == k {
			return true
		}
	}
	return false
}
