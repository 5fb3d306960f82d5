//go:build unix

package host

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// setGroup makes cmd the leader of a new session, and so of a new process
// group: everything it starts stays in that session unless it starts a
// session of its own, even when it moves to a process group of its own (as
// an executor does with an upstream server it wants to kill as a tree).
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// killGroup SIGKILLs what the plugin led by pid started: its process group
// and, where the system lets us find them, the other members of its
// session. Call it before the leader is reaped, so that neither id can
// have been reused.
func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	killSession(pid)
}

// executable reports whether a file named name with mode may be executed.
func executable(_ string, mode fs.FileMode) bool { return mode&0o111 != 0 }

// pollableStdin returns stdin read through the runtime's network poller
// (as the SDK reads it): a blocking read would park a thread holding its P
// until sysmon takes it back, stalling a GOMAXPROCS=1 executor meanwhile.
func pollableStdin() *os.File {
	if err := syscall.SetNonblock(int(os.Stdin.Fd()), true); err != nil {
		return os.Stdin
	}
	// NewFile sees the non-blocking descriptor and registers it with the poller.
	return os.NewFile(os.Stdin.Fd(), "/dev/stdin")
}
