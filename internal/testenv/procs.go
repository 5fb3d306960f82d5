package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// procStat is the part of a process table entry the helpers below need.
type procStat struct {
	pid, ppid, pgid int
	state           byte
}

// live reports whether the process still runs: zombies (exited, not yet
// reaped) and dead entries do not count.
func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' }

// ChildPIDs returns the live child processes of the current process (the test
// binary), zombies excluded. With Subreaper enabled this includes orphaned
// descendants, which the kernel then hands to the test process instead of init.
func ChildPIDs() []int {
	self := os.Getpid()
	var pids []int
	for _, p := range processes() {
		if p.ppid == self && p.live() {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// ProcessCount returns the number of live child processes of the current process.
func ProcessCount() int { return len(ChildPIDs()) }

// GroupPIDs returns the live members of process group pgid.
func GroupPIDs(pgid int) []int {
	var pids []int
	for _, p := range processes() {
		if p.pgid == pgid && p.live() {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// WaitNoChildren waits until the current process has no live children and
// fails the test, naming each one left, when that takes longer than timeout.
// Tests running in parallel with processes of their own make this unreliable.
func WaitNoChildren(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pids := ChildPIDs()
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, pid := range pids {
				fmt.Fprintf(&b, "\n  pid %d: %s", pid, cmdline(pid))
			}
			t.Errorf("%d child processes still running after %v:%s", len(pids), timeout, b.String())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
