//go:build unix

package host

import (
	"io/fs"
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
// session and, while the leader runs, its descendants. Those go first: once
// the leader is dead, nothing ties a descendant that left the session to
// it. Call it before the leader is reaped, so that neither id can have
// been reused.
func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	killSession(pid)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// executable reports whether a file named name with mode may be executed.
func executable(_ string, mode fs.FileMode) bool { return mode&0o111 != 0 }
