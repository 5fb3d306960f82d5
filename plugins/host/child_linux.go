package host

import (
	"os"
	"slices"
	"syscall"
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
	killAll(func(ps []procStat) []int {
		sid := 0
		kids := map[int][]int{}
		for _, p := range ps {
			kids[p.ppid] = append(kids[p.ppid], p.pid)
			if p.pid == self {
				sid = p.sid
			}
		}
		below := map[int]bool{}
		for queue := slices.Clone(kids[self]); len(queue) > 0; queue = queue[1:] {
			if pid := queue[0]; !below[pid] {
				below[pid] = true
				queue = append(queue, kids[pid]...)
			}
		}
		var pids []int
		for _, p := range ps {
			if p.pid != self && p.live() && (below[p.pid] || sid == self && p.sid == sid) {
				pids = append(pids, p.pid)
			}
		}
		return pids
	})
}
