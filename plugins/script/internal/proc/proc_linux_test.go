package proc

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// daemonScript starts `setsid sleep` in the background, the way a script
// leaves a daemon behind: in a session of its own, outside the process
// group, re-parented once the script is gone. The daemon prints its pid.
const daemonScript = `setsid sh -c 'echo $$; exec sleep 300 >/dev/null 2>&1' </dev/null &` + "\n"

// A child that left the process group is killed with it, whether the
// process is stopped (a tool's timeout) or exits on its own (a skill's
// script run from the CLI).
func TestDaemonKilled(t *testing.T) {
	for _, tc := range []struct {
		name, tail string
		stop       func(p *Process)
	}{
		{"stopped", "while :; do sleep 0.1; done\n", (*Process).Stop},
		{"exited", "exit 0\n", func(p *Process) { p.Result() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids := make(chan int, 1)
			p, err := Start(Config{
				Argv: []string{"bash", "-c", daemonScript + tc.tail},
				Env:  []string{"PATH=/usr/bin:/bin"},
				Stdout: Output{Keep: 1024, OnLine: func(line []byte, _ bool) {
					if pid, err := strconv.Atoi(string(line)); err == nil {
						select {
						case pids <- pid:
						default:
						}
					}
				}},
				Grace: 200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			var daemon int
			select {
			case daemon = <-pids:
			case <-p.Done():
				select {
				case daemon = <-pids: // printed just before the end
				default:
					t.Fatalf("the script ended without printing the daemon's pid: %+v", p.Result())
				}
			case <-time.After(30 * time.Second):
				p.Kill()
				t.Fatal("no daemon pid in 30s")
			}
			t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
			tc.stop(p)
			deadline := time.Now().Add(5 * time.Second)
			for testenv.Alive(daemon) {
				if time.Now().After(deadline) {
					t.Fatalf("the daemon %d that left the process group still runs after the process ended", daemon)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
