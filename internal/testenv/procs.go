package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procStat is the part of /proc/PID/stat the helpers below need.
type procStat struct {
	pid, ppid, pgid int
	state           byte
}

// live reports whether the process still runs: zombies (exited, not yet
// reaped) and dead entries do not count.
func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' }

// Alive reports whether pid runs; zombies (exited, not yet reaped) do not
// count.
func Alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return false
	}
	return procStat{state: data[i+2]}.live()
}

// processes lists every process in /proc. It returns nil where there is no /proc.
func processes() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 || len(f[0]) == 0 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgid, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, procStat{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]})
	}
	return out
}

// ChildPIDs returns the live child processes of the current process (the test
// binary), zombies excluded. With Subreaper enabled this includes orphaned
// descendants, which the kernel then hands to the test process instead of init.
func ChildPIDs() []int {
	self := os.Getpid()
	var pids []int
	for _, p := range processes() {
		if p.ppid == self && p.live() {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// ProcessCount returns the number of live child processes of the current process.
func ProcessCount() int { return len(ChildPIDs()) }

// GroupPIDs returns the live members of process group pgid.
func GroupPIDs(pgid int) []int {
	var pids []int
	for _, p := range processes() {
		if p.pgid == pgid && p.live() {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// WaitNoChildren waits until the current process has no live children and
// fails the test, naming each one left, when that takes longer than timeout.
// Tests running in parallel with processes of their own make this unreliable.
func WaitNoChildren(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pids := ChildPIDs()
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, pid := range pids {
				fmt.Fprintf(&b, "\n  pid %d: %s", pid, cmdline(pid))
			}
			t.Errorf("%d child processes still running after %v:%s", len(pids), timeout, b.String())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// Subreaper makes the test process a child subreaper (Linux), so that a
// process orphaned by one of its children (a grandchild whose parent died) is
// re-parented to the test process and shows up in ChildPIDs. It lasts for the
// rest of the test binary's life; orphans that exit stay as zombies, which
// ChildPIDs ignores.
func Subreaper(t testing.TB) {
	t.Helper()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}

// cmdline returns a process's command line for messages.
func cmdline(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}
