package childproc

import (
	"os/exec"
	"testing"
)

func TestStart(t *testing.T) {
	cmd := exec.Command("true")
	done := make(chan error, 1)
	if err := Start(cmd, func() { done <- cmd.Wait() }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("wait: %v", err)
	}
	called := false
	if err := Start(exec.Command("/nonexistent/binary"), func() { called = true }); err == nil || called {
		t.Fatalf("a command that cannot start: err %v, wait called %v", err, called)
	}
}
