//go:build unix && !linux

package testenv

import (
	"runtime"
	"testing"
)

// Alive reports whether pid runs; zombies (exited, not yet reaped) do not
// count. Without /proc it asks ps(1).
func Alive(pid int) bool { return psAlive(pid) }

// processes lists every process, as ps(1) shows them where there is no
// /proc; nil if ps fails.
func processes() []procStat { return psProcesses() }

// Subreaper fails the test: re-parenting orphans to the test process
// (PR_SET_CHILD_SUBREAPER) is Linux only, and a test that needs it cannot
// check what it means to here.
func Subreaper(t testing.TB) {
	t.Helper()
	t.Fatalf("testenv.Subreaper needs PR_SET_CHILD_SUBREAPER, which only Linux has; this test cannot run on %s", runtime.GOOS)
}

// cmdline returns a process's command line for messages.
func cmdline(pid int) string { return psCmdline(pid) }
