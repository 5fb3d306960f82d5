package host

import (
	"bytes"
	"os"
	"strconv"
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

// killSession SIGKILLs the live members of session sid, found in /proc.
func killSession(sid int) {
	killAll(func(ps []procStat) []int {
		var pids []int
		for _, p := range ps {
			if p.sid == sid && p.live() {
				pids = append(pids, p.pid)
			}
		}
		return pids
	})
}

// killAll SIGKILLs the processes pick chooses from a fresh read of /proc. A
// victim may fork while it is being killed, so it looks again until a pass
// finds no one new. That takes a few passes at most: a process with a
// SIGKILL pending can no longer fork, so each pass only finds children
// forked before the previous one's kill.
func killAll(pick func([]procStat) []int) {
	killed := map[int]bool{}
	for range 20 {
		fresh := false
		for _, pid := range pick(processes()) {
			if !killed[pid] {
				killed[pid] = true
				fresh = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !fresh {
			return
		}
	}
}

// procStat is what /proc/PID/stat says about a process that this package
// needs.
type procStat struct {
	pid, ppid, sid int
	state          byte
}

// live reports whether the process has not exited (zombies have).
func (p procStat) live() bool { return p.state != 'Z' && p.state != 'X' }

// processes reads every process in /proc; nil where there is no /proc.
func processes() []procStat {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	ps := make([]procStat, 0, len(names))
	buf := make([]byte, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readStat(pid, buf); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// readStat reads /proc/PID/stat: "pid (comm) state ppid pgrp session ...",
// where comm may hold anything.
func readStat(pid int, buf []byte) (procStat, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	n, _ := f.Read(buf)
	f.Close()
	data := buf[:n]
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 4 || len(fields[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	sid, err2 := strconv.Atoi(string(fields[3]))
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{pid: pid, ppid: ppid, sid: sid, state: fields[0][0]}, true
}
