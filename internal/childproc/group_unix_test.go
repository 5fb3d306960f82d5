//go:build unix

package childproc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Killing the group kills what the child started in it: once every holder
// of the child's stdout is dead, reading it ends.
func TestGroupKill(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("sh", "-c", "sleep 300 & echo started; wait")
	cmd.Stdout = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := make(chan error, 1)
	g, err := Start(cmd, func() { done <- cmd.Wait() })
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	br := bufio.NewReader(r)
	if line, err := br.ReadString('\n'); line != "started\n" {
		_ = g.Kill()
		t.Fatalf("first line %q, %v", line, err)
	}
	if err := g.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if err := <-done; err == nil {
		t.Fatal("the shell exited cleanly after SIGKILL")
	}
	eof := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, br)
		eof <- err
	}()
	select {
	case err := <-eof:
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("a process the child started in its group still holds its stdout after Kill")
	}
}
