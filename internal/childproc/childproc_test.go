package childproc

import (
	"os/exec"
	"testing"
)

func TestStart(t *testing.T) {
	cmd := exec.Command("true")
	done := make(chan error, 1)
	g, err := Start(cmd, func() { done <- cmd.Wait() })
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("wait: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	called := false
	if g, err := Start(exec.Command("/nonexistent/binary"), func() { called = true }); err == nil || called || g != nil {
		t.Fatalf("a command that cannot start: group %v, err %v, wait called %v", g, err, called)
	}
}
