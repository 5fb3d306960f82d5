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

// daemonPIDs reads the pids the daemons of mcpserver noted in file.
func daemonPIDs(file string) []int {
	data, _ := os.ReadFile(file)
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestKilledPluginTakesDaemons SIGKILLs a built-in mcp executor whose
// stdio server started a daemon by a double fork: the daemon left the
// executor's session and was re-parented before anything saw it below the
// executor, and the executor, killed, stops nothing itself. The daemon
// carries the mark the host gave the executor's process, and dies once
// the host sees the executor gone.
func TestKilledPluginTakesDaemons(t *testing.T) {
	checkLeaks(t)
	sink := newLogSink()
	sink.dumpOnFailure(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "daemons")
	p := startPlugin(t, helperSpec(t, "builtin-mcp"), host.Options{Logger: slog.New(sink), MinBackoff: 10 * time.Millisecond})
	t.Cleanup(func() {
		for _, pid := range daemonPIDs(pidFile) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	spec, _ := json.Marshal(map[string]any{"command": exe, "env": map[string]string{
		envMode: "mcpserver", envDaemonPID: pidFile, "GORACE": "atexit_sleep_ms=0",
	}})
	if _, err := p.Load(context.Background(), sdk.LoadRequest{Source: "stub", Kind: mcp.Kind, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	pids := daemonPIDs(pidFile)
	if len(pids) != 1 || !testenv.Alive(pids[0]) {
		t.Fatalf("the server's daemon is not running: %v", pids)
	}
	daemon := pids[0]
	plugin := p.Status().PID
	if d, ok := procStat(daemon); !ok || d.sid != daemon || d.ppid == plugin {
		t.Fatalf("the daemon %d did not leave the executor's session, or is its child: %+v", daemon, d)
	}

	if err := syscall.Kill(plugin, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the host to notice the executor's death", func() bool {
		st := p.Status()
		return st.PID != plugin && st.LastError != ""
	})
	deadline := time.Now().Add(5 * time.Second)
	for testenv.Alive(daemon) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon %d of the killed executor %d still runs", daemon, plugin)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type stat struct{ ppid, sid int }

// procStat reads a process's parent and session from /proc/PID/stat.
func procStat(pid int) (stat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 4 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	sid, _ := strconv.Atoi(f[3])
	return stat{ppid, sid}, true
}
