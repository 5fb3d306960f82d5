package testenv

import (
	"runtime"
	"testing"

	"golang.org/x/sys/windows"
)

// stillActive is STILL_ACTIVE, the exit code of a process that runs.
const stillActive = 259

// Alive reports whether pid runs.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// processes returns nil: the process table helpers (ChildPIDs, GroupPIDs,
// WaitNoChildren) see no processes on Windows.
func processes() []procStat { return nil }

// Subreaper fails the test: re-parenting orphans to the test process
// (PR_SET_CHILD_SUBREAPER) is Linux only.
func Subreaper(t testing.TB) {
	t.Helper()
	t.Fatalf("testenv.Subreaper needs PR_SET_CHILD_SUBREAPER, which only Linux has; this test cannot run on %s", runtime.GOOS)
}

// cmdline returns "?": it is only used for messages.
func cmdline(int) string { return "?" }
