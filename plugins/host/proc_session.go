//go:build linux || darwin

package host

import "github.com/skillgate/skillgate/internal/childproc"

// killSession SIGKILLs the live members of session sid, found in the
// process table (/proc, or the kern.proc sysctl and getsid(2) on macOS),
// and, while its leader runs, the leader's descendants: they include what
// left the session, which is found by parent links only as long as every
// process between it and the leader still runs. On macOS the leader was
// reaped already (see waitExitNoReap), which frees its pid but not the
// session's id: the kernel gives no new process a pid that is still a
// session's or a process group's id, so the members found are the
// plugin's.
func killSession(sid int) {
	childproc.KillAll(func(ps []childproc.Proc) []int {
		below := childproc.Below(ps, sid)
		var pids []int
		for _, p := range ps {
			if p.PID != sid && p.Live() && (p.SID == sid || below[p.PID]) {
				pids = append(pids, p.PID)
			}
		}
		return pids
	})
}
