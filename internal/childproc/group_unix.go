//go:build unix

package childproc

import (
	"os"
	"syscall"
)

// Group is the process group a child leads. The child must have been
// started as a group leader (SysProcAttr.Setpgid or Setsid); a signal sent
// to the group reaches everything the child started that stayed in it.
type Group struct{ pgid int }

func newGroup(p *os.Process) *Group { return &Group{pgid: p.Pid} }

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error { return syscall.Kill(-g.pgid, sig) }

// Kill sends SIGKILL to every process of the group.
func (g *Group) Kill() error { return syscall.Kill(-g.pgid, syscall.SIGKILL) }

// Close releases what the group holds; on Unix, nothing.
func (g *Group) Close() error { return nil }
