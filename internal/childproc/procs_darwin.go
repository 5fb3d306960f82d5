package childproc

import (
	"golang.org/x/sys/unix"
)

// Process states of macOS's <sys/proc.h> (p_stat).
const (
	sIdle   = 1 // being created by fork
	sRun    = 2
	sSleep  = 3
	sStop   = 4
	sZombie = 5
)

// Processes reads every process from the kern.proc.all sysctl, with its
// session from getsid(2); nil if the sysctl fails.
func Processes() []Proc {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	ps := make([]Proc, 0, len(kps))
	for i := range kps {
		ps = append(ps, fromKinfo(&kps[i]))
	}
	return ps
}

// process reads one process from the kern.proc.pid sysctl.
func process(pid int) (Proc, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) { // no such process: an empty record
		return Proc{}, false
	}
	return fromKinfo(kp), true
}

func fromKinfo(kp *unix.KinfoProc) Proc {
	p := Proc{
		PID:   int(kp.Proc.P_pid),
		PPID:  int(kp.Eproc.Ppid),
		PGID:  int(kp.Eproc.Pgid),
		Start: uint64(kp.Proc.P_starttime.Sec)*1e6 + uint64(kp.Proc.P_starttime.Usec),
	}
	switch kp.Proc.P_stat {
	case sIdle:
		p.State = 'I'
	case sRun:
		p.State = 'R'
	case sSleep:
		p.State = 'S'
	case sStop:
		p.State = 'T'
	case sZombie:
		p.State = 'Z'
	default:
		p.State = '?'
	}
	if sid, err := unix.Getsid(p.PID); err == nil {
		p.SID = sid
	}
	return p
}
