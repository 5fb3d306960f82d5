package childproc

import (
	"bytes"
	"os"
	"strconv"
)

// Processes reads every process in /proc; nil where there is no /proc.
func Processes() []Proc {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	ps := make([]Proc, 0, len(names))
	buf := make([]byte, 1024)
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

// readStat reads /proc/PID/stat: "pid (comm) state ppid pgrp session ...
// starttime ...", where comm may hold anything.
func readStat(pid int, buf []byte) (Proc, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	n, _ := f.Read(buf)
	f.Close()
	data := buf[:n]
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return Proc{}, false
	}
	// After comm: state(0) ppid(1) pgrp(2) session(3) ... starttime(19).
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return Proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgid, err2 := strconv.Atoi(string(fields[2]))
	sid, err3 := strconv.Atoi(string(fields[3]))
	start, err4 := strconv.ParseUint(string(fields[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, PPID: ppid, PGID: pgid, SID: sid, State: fields[0][0], Start: start}, true
}

// process reads /proc/PID/stat.
func process(pid int) (Proc, bool) { return readStat(pid, make([]byte, 1024)) }
