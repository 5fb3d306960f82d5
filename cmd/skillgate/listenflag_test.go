package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// run --listen 0.0.0.0:PORT without auth.tokens warns naming the flag, not
// the config's listen.http, and both its warning and "serving MCP" give
// the wildcard bind as 0.0.0.0:PORT, which a user can paste, not [::].
func TestListenFlagWarningAndURL(t *testing.T) {
	bin := buildSkillgate(t)
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, "listen:\n  http: 127.0.0.1:8811\nservers: {}\n")
	port := strconv.Itoa(testenv.FreePort(t))
	p := testenv.Start(t, exec.Command(bin, "-c", cfg, "run", "--listen", "0.0.0.0:"+port))
	if err := p.WaitOutput("open beyond loopback", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, p)
	var serving, warn string
	for _, line := range strings.Split(string(p.Output()), "\n") {
		switch {
		case strings.Contains(line, `msg="serving MCP"`):
			serving = line
		case strings.Contains(line, "open beyond loopback"):
			warn = line
		}
	}
	if want := `url="http://0.0.0.0:` + port + `/mcp (all interfaces)"`; !strings.Contains(serving, want) {
		t.Errorf("serving MCP: want %s in\n%s", want, serving)
	}
	if want := `problem="--listen: 0.0.0.0:` + port + " listens beyond loopback"; !strings.Contains(warn, want) ||
		strings.Contains(warn, "skillgate.yaml") || strings.Contains(warn, "[::]") {
		t.Errorf("warning: want it to start %q and not to name the config file or [::]:\n%s", want, warn)
	}
}

// waitExit waits until the gateway p exits after a signal, failing the
// test if it still runs 2 minutes later.
func waitExit(t *testing.T, p *testenv.Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("the gateway still runs 2 minutes after SIGTERM")
	}
}
