// Package childproc starts child processes whose parent-death signal
// (SysProcAttr.Pdeathsig on Linux) fires only when the parent dies, not
// when some thread of it ends, and finds what they left behind: on Linux
// and macOS it reads the process table (/proc, the kern.proc sysctl:
// [Processes], [Below]), kills a chosen set of processes even while they
// fork ([KillAll]), and follows a child's descendants after they left its
// process group or session, or outlived it ([Tree]). A [Group] signals a
// child together with what it started: its process group on Unix, a job
// object on Windows. [Env] is the clean environment a child starts from,
// and on Windows [WrapBatch] runs a .cmd or .bat script without letting
// cmd.exe read its arguments as commands.
package childproc

import (
	"os/exec"
	"runtime"
)

// Start starts cmd on a goroutine locked to its OS thread and, once it
// started, runs wait there; wait must return only after cmd was reaped
// (cmd.Wait). The kernel sends a child its parent-death signal when the
// thread that forked it exits, not the process, and the Go runtime ends a
// thread when a goroutine exits while locked to it: a child forked on a
// thread that another goroutine later locks and ends would be killed with
// its parent still running. This costs no thread: waiting for the child
// holds one in a system call anyway.
//
// The returned Group holds the child and what it starts: on Unix its
// process group (cmd must be started as a group leader, see Group), on
// Windows a job object. Where there is no parent-death signal (macOS), a
// watchdog process kills the group should this process die before the
// Group is closed. Close it once cmd was reaped.
func Start(cmd *exec.Cmd, wait func()) (*Group, error) {
	type started struct {
		g   *Group
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			ch <- started{err: err}
			return
		}
		ch <- started{g: newGroup(cmd.Process)}
		wait()
	}()
	s := <-ch
	return s.g, s.err
}
