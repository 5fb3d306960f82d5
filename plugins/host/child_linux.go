package host

import (
	"os"
	"syscall"

	"github.com/skillgate/skillgate/internal/childproc"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// adoptOrphans makes this process a child subreaper: a process below it
// whose parent dies is re-parented to it instead of to init, so that
// killLeftovers still finds it, even in a session of its own. ServeBuiltin
// turns this on only for its shutdown: orphans that exit become this
// process's zombies, and while it runs nothing reaps them (a reaper would
// race os/exec for the children it waits for).
func adoptOrphans() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// killLeftovers SIGKILLs every process below this one, by the parent links
// in /proc, and, when this process leads its session, every other member
// of the session: a process that moved to a process group of its own but
// stayed in the session, even orphaned before adoptOrphans.
func killLeftovers() {
	self := os.Getpid()
	childproc.KillAll(func(ps []childproc.Proc) []int {
		sid := 0
		for _, p := range ps {
			if p.PID == self {
				sid = p.SID
			}
		}
		below := childproc.Below(ps, self)
		var pids []int
		for _, p := range ps {
			if p.PID != self && p.Live() && (below[p.PID] || sid == self && p.SID == sid) {
				pids = append(pids, p.PID)
			}
		}
		return pids
	})
}
