package testenv

import (
	"fmt"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestSubreaperSeesOrphans checks that an orphan that escaped its parent's
// process group shows up in ChildPIDs once Subreaper is on.
func TestSubreaperSeesOrphans(t *testing.T) {
	Subreaper(t)
	// The orphan must not hold the output pipe, or waiting for sh would too.
	p := Start(t, exec.Command("sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!"))
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	var orphan int
	if _, err := fmt.Sscan(string(p.Output()), &orphan); err != nil {
		t.Fatalf("read orphan pid from %q: %v", p.Output(), err)
	}
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			_ = syscall.Kill(orphan, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(ChildPIDs(), orphan) {
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d not among ChildPIDs %v", orphan, ChildPIDs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(orphan, &ws, 0, nil); err != nil {
		t.Fatalf("reap orphan: %v", err)
	}
	reaped = true
	WaitNoChildren(t, 5*time.Second)
}
