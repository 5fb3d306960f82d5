//go:build unix

package testenv

import (
	"os/exec"
	"testing"
	"time"
)

// TestStopKillsGroup starts a shell with a background grandchild and checks
// that Stop leaves no member of the group and no child behind.
func TestStopKillsGroup(t *testing.T) {
	before := ProcessCount()
	p := Start(t, exec.Command("sh", "-c", "sleep 300 & echo started; wait"))
	if err := p.WaitOutput("started", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(GroupPIDs(p.PID())); n != 2 {
		t.Errorf("group %d has %d live members, want 2 (sh and sleep)", p.PID(), n)
	}
	if got := ProcessCount(); got != before+1 {
		t.Errorf("ProcessCount = %d, want %d", got, before+1)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := GroupPIDs(p.PID()); len(left) != 0 {
		t.Errorf("after Stop, group still has %v", left)
	}
	if err := p.Stop(); err != nil { // idempotent
		t.Errorf("second Stop: %v", err)
	}
	WaitNoChildren(t, 5*time.Second)
}
