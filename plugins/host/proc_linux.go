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

// killSession SIGKILLs the live members of session sid, found in /proc. A
// member may fork while it is being killed, so it looks again until a pass
// finds no one new (a few passes at most).
func killSession(sid int) {
	killed := map[int]bool{}
	for range 5 {
		fresh := false
		for _, pid := range sessionMembers(sid) {
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

// sessionMembers lists the processes of session sid that have not exited.
func sessionMembers(sid int) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	var pids []int
	buf := make([]byte, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if s, state, ok := readSession(pid, buf); ok && s == sid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// readSession reads a process's session id and state from /proc/PID/stat:
// "pid (comm) state ppid pgrp session ...", where comm may hold anything.
func readSession(pid int, buf []byte) (sid int, state byte, ok bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	n, _ := f.Read(buf)
	f.Close()
	data := buf[:n]
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 4 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	sid, err = strconv.Atoi(string(fields[3]))
	return sid, fields[0][0], err == nil
}
