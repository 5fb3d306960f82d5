package host

import (
	"syscall"
	"unsafe"

	"github.com/skillgate/skillgate/internal/childproc"
)

// pPID and wNOWAIT are P_PID and WNOWAIT from <sys/wait.h>.
const (
	pPID    = 1
	wNOWAIT = 0x1000000
)

// waitExitNoReap blocks until process pid has exited, leaving it a zombie so
// that its pid (and process group and session id) stays taken until it is
// reaped.
func waitExitNoReap(pid int) error {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

// killSession SIGKILLs the live members of session sid, found in /proc,
// and, while its leader runs, the leader's descendants: they include
// what left the session, which is found by parent links only as long as
// every process between it and the leader still runs.
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
