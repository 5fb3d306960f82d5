//go:build unix

package childproc

import (
	"os"
	"sync"
	"syscall"
)

// Group is the process group a child leads. The child must have been
// started as a group leader (SysProcAttr.Setpgid or Setsid); a signal sent
// to the group reaches everything the child started that stayed in it.
// Where the kernel has no parent-death signal (macOS), a watchdog process
// kills the group if this process dies before Close (see runWatchdog).
type Group struct {
	pgid   int
	closed sync.Once
}

func newGroup(p *os.Process) *Group {
	watch(p.Pid)
	return &Group{pgid: p.Pid}
}

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error { return syscall.Kill(-g.pgid, sig) }

// Kill sends SIGKILL to every process of the group.
func (g *Group) Kill() error { return syscall.Kill(-g.pgid, syscall.SIGKILL) }

// Close releases the group once its leader was reaped: the watchdog, if
// any, forgets it. It is idempotent.
func (g *Group) Close() error {
	g.closed.Do(func() { unwatch(g.pgid) })
	return nil
}
