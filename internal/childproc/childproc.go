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
//
// What a Group reaches on Linux: [Start] puts a variable unique to the
// child (SKILLGATE_TREE_<id>=1, see [TreeEnvPrefix]) in its environment,
// which every descendant inherits, and the Group signals each process of
// this user (and of the child's, when it runs as another) whose
// /proc/PID/environ carries it, as Jenkins' ProcessTreeKiller does. So a
// daemon is killed with the child however it detached: setsid, a double
// fork, re-parented to init before anything looked, or left running after
// the child exited. The limit: a descendant that runs a program with an
// environment without the mark (env -i, sudo, an execve with a fresh one)
// or as another user escapes; a sandbox's PID namespace (bubblewrap's
// --unshare-pid with --die-with-parent) is what holds every descendant.
// [StartMarked] gives such a mark to a child that code of its own reaps
// (a plugin process go-plugin runs), and its [Mark] kills what carries it
// once the child is gone. No reaper is involved (no wait for any child,
// no PR_SET_CHILD_SUBREAPER), so nothing takes an exit status os/exec
// waits for.
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
// process group (cmd must be started as a group leader, see Group), and on
// Linux also the processes that carry the mark Start adds to cmd.Env
// together with the marks this process carries (see TreeEnvPrefix); on
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
		m := markTree(cmd)
		if err := cmd.Start(); err != nil {
			ch <- started{err: err}
			return
		}
		m.rooted(cmd.Process.Pid)
		ch <- started{g: newGroup(cmd.Process, m)}
		wait()
	}()
	s := <-ch
	return s.g, s.err
}
