package host

import (
	"syscall"
	"unsafe"
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
