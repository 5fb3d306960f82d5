//go:build unix

package testenv

import (
	"bufio"
	"bytes"
	"os/exec"
	"strconv"
	"strings"
)

// psProcesses lists every process as ps(1) shows it, for the systems
// without /proc; nil if ps fails.
func psProcesses() []procStat {
	out, err := exec.Command("ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat=").Output()
	if err != nil {
		return nil
	}
	return parsePS(out)
}

// psAlive is Alive by ps(1): whether pid runs, zombies excluded.
func psAlive(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return procStat{state: s[0]}.live()
	}
	return false
}

// psCmdline is cmdline by ps(1).
func psCmdline(pid int) string {
	out, err := exec.Command("ps", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return s
	}
	return "?"
}

// parsePS reads the output of `ps -A -o pid= -o ppid= -o pgid= -o stat=`.
func parsePS(out []byte) []procStat {
	var ps []procStat
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		pgid, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		ps = append(ps, procStat{pid: pid, ppid: ppid, pgid: pgid, state: f[3][0]})
	}
	return ps
}
