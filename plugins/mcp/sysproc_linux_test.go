package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/internal/testenv"
)

// A stdio server that daemonizes a helper the classic way (fork, setsid,
// fork again, the middle exits) before it serves: the daemon is in no
// process group, session or parent line of the server's by the time the
// executor stops it, and is killed all the same.
func TestStopKillsDoubleForkedDaemon(t *testing.T) {
	h := newHarness(t)
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	// $0 is the faultserver, $1 the pid file; ( ... & ) is the middle.
	script := `( setsid sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 300' sh "$1" </dev/null >/dev/null 2>&1 & ); exec "$0"`
	spec := map[string]any{"command": "/bin/sh", "args": []string{"-c", script, faultServer, pidFile}, "shutdown_grace": "1s"}
	h.load("d", spec)
	leader := h.e.Status()["d"].PID
	var daemon int
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(pidFile)
		daemon, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		// Orphaned: no parent link leads from the server to it any more.
		if daemon > 0 && testenv.Alive(daemon) && !childproc.Below(childproc.Processes(), leader)[daemon] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no orphaned daemon below server %d in 10s (pid file: %d)", leader, daemon)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })

	if err := h.c.Unload(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for testenv.Alive(daemon) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's daemon %d still runs after the executor stopped the server", daemon)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
