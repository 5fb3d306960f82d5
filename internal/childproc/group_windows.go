package childproc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Group is a job object the child is put in as soon as it started, the
// closest Windows has to a process group: what the child starts afterwards
// is in the job too, and ends with it. The job kills what it holds when its
// last handle closes, so the children also end when this process dies,
// as Pdeathsig makes them on Linux. Processes the child started before it
// was put in the job are not in it. Where the job cannot be made (a parent
// job that forbids nesting), the group holds the child alone. Methods are
// safe for concurrent use.
type Group struct {
	proc *os.Process

	mu     sync.Mutex
	job    windows.Handle // 0 when the child could not be put in a job
	closed bool
}

func newGroup(p *os.Process, _ *mark) *Group {
	g := &Group{proc: p}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return g
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return g
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return g
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return g
	}
	g.job = job
	return g
}

// errNoSignals is returned for the signals Windows cannot deliver.
var errNoSignals = errors.New("windows delivers no signals but SIGKILL to a process")

// Signal kills the group for SIGKILL; Windows has no other signal to send,
// so any other sig does nothing and returns an error saying so.
func (g *Group) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return g.Kill()
	}
	return fmt.Errorf("send %v to process %d: %w", sig, g.proc.Pid, errNoSignals)
}

// Kill terminates every process of the job, or the child alone when it is
// not in one.
func (g *Group) Kill() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	if g.job != 0 {
		return windows.TerminateJobObject(g.job, 1)
	}
	return g.proc.Kill()
}

// Close releases the job, which kills what is still in it; later calls do
// nothing. It is idempotent.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	if g.job == 0 {
		return nil
	}
	return windows.CloseHandle(g.job)
}
