//go:build unix

package testenv

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// The ps(1) readings used where there is no /proc agree with the process
// table: a child's parent and group, its command line, and a zombie that
// does not count as alive.
func TestPS(t *testing.T) {
	p := Start(t, exec.Command("sleep", "300"))
	var found *procStat
	for _, s := range psProcesses() {
		if s.pid == p.PID() {
			found = &s
		}
	}
	want := procStat{pid: p.PID(), ppid: os.Getpid(), pgid: p.PID()}
	if found == nil || found.ppid != want.ppid || found.pgid != want.pgid || !found.live() {
		t.Fatalf("ps shows the child as %+v, want %+v and live", found, want)
	}
	if !psAlive(p.PID()) {
		t.Error("psAlive says a running child is not alive")
	}
	if got := psCmdline(p.PID()); got != "sleep 300" {
		t.Errorf("psCmdline = %q, want %q", got, "sleep 300")
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if psAlive(p.PID()) {
		t.Error("psAlive says a reaped child is alive")
	}

	// A child that exited and was not reaped yet is a zombie.
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for psAlive(z.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("psAlive still says %d is alive 10 s after it ran `true`: %s", z.Process.Pid, psCmdline(z.Process.Pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	var zs *procStat
	for _, s := range psProcesses() {
		if s.pid == z.Process.Pid {
			zs = &s
		}
	}
	if zs == nil || zs.live() {
		t.Errorf("ps shows the zombie as %+v, want an entry that is not live", zs)
	}
}
