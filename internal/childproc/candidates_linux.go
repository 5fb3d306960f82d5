package childproc

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// fastScanFor is how long after a child started a pass looks only at the
// pids handed out since (see candidates): two wraparounds of the pids
// take far longer, even at the smallest pid_max (32768).
const fastScanFor = 30 * time.Second

// candidates lists the processes a pass of m must look at. For a child
// that started less than fastScanFor ago, those whose pid the kernel
// handed out since the child's, which is where every descendant is; else,
// or when that cannot be told, all. Reading the pid list is cheap;
// reading every process's stat, which Processes does, costs about a
// millisecond on a busy machine, and a pass runs at the end of every
// script call. The pid range is right unless the pids wrapped around
// twice since the child started (once is seen: the last pid is then
// below the child's); a long-lived child, such as an executor plugin, may
// see that, so it gets the full scan.
func (m *mark) candidates() []Proc {
	last, ok := lastPID()
	if m.pid <= 0 || !ok || time.Since(m.at) > fastScanFor {
		return Processes()
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	buf := make([]byte, 1024)
	var ps []Proc
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || !handedOutSince(pid, m.pid, last) {
			continue
		}
		if p, ok := readStat(pid, buf); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// handedOutSince reports whether pid was handed out after first (or is
// first) and up to last, the last pid handed out: pids grow until they
// wrap around to low numbers, so with last below first they wrapped.
func handedOutSince(pid, first, last int) bool {
	if last >= first {
		return pid >= first && pid <= last
	}
	return pid >= first || pid <= last
}

// lastPID reads the last pid the kernel handed out in this pid namespace.
func lastPID() (int, bool) {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	return n, err == nil && n > 0
}
