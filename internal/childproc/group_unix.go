//go:build unix

package childproc

import (
	"os"
	"sync"
	"syscall"
)

// Group is the process group a child leads and, on Linux, the processes
// that carry the mark of its tree (see TreeEnvPrefix). The child must have
// been started as a group leader (SysProcAttr.Setpgid or Setsid); a signal
// sent to the group reaches everything the child started that stayed in
// it, and the mark what left it: a daemon that called setsid, forked again
// and was re-parented to init, before or after the child exited. A
// process that runs with an environment without the mark is not found (a
// sandbox's PID namespace is what holds every descendant). Where the
// kernel has no parent-death signal (macOS), a watchdog process kills the
// group if this process dies before Close (see runWatchdog).
type Group struct {
	pgid   int
	mark   *mark // nil where no tree is marked
	closed sync.Once
}

func newGroup(p *os.Process, m *mark) *Group {
	watch(p.Pid)
	return &Group{pgid: p.Pid, mark: m}
}

// Signal sends sig to every process of the group and to every other
// process that carries the group's mark; SIGKILL does what Kill does. The
// error is that of signalling the group.
func (g *Group) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return g.Kill()
	}
	err := syscall.Kill(-g.pgid, sig)
	g.mark.signal(g.pgid, sig)
	return err
}

// Kill sends SIGKILL to every process of the group and to every process
// that carries the group's mark, also after the child was reaped, and
// again to what they fork meanwhile. The error is that of signalling the
// group (ESRCH once it is empty).
func (g *Group) Kill() error {
	err := syscall.Kill(-g.pgid, syscall.SIGKILL)
	g.mark.kill()
	return err
}

// Close releases the group once its leader was reaped: the watchdog, if
// any, forgets it. It is idempotent.
func (g *Group) Close() error {
	g.closed.Do(func() { unwatch(g.pgid) })
	return nil
}
