//go:build linux || darwin

package host

import (
	"os"

	"github.com/skillgate/skillgate/internal/childproc"
)

// killLeftovers SIGKILLs every process below this one, by the parent links
// of the process table, and, when this process leads its session, every
// other member of the session: a process that moved to a process group of
// its own but stayed in the session, even orphaned before adoptOrphans (or,
// on macOS, which has no subreapers, orphaned at all).
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
