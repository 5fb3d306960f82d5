//go:build linux || darwin

package childproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envWatchdogHelper makes TestWatchdogHelper the starter of two process
// groups it leaves to a watchdog.
const envWatchdogHelper = "CHILDPROC_WATCHDOG_HELPER"

// TestWatchdogHelper is not a test: run by TestWatchdog, it starts two
// sleeping process groups without a parent-death signal, has a watchdog
// watch both, then forget the second, prints both pids, and waits to be
// killed.
func TestWatchdogHelper(t *testing.T) {
	if os.Getenv(envWatchdogHelper) != "1" {
		return
	}
	var d watchdog
	var pids []string
	for range 2 {
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		d.add(cmd.Process.Pid)
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
	}
	d.remove(atoi(pids[1]))
	fmt.Println(strings.Join(pids, " "))
	time.Sleep(time.Hour)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, ok := process(pid)
	return ok && p.Live()
}

// waitGone waits up to within for pid to be gone, and fails the test
// with why (which names what still runs) if it is not.
func waitGone(t *testing.T, pid int, within time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// When the process that started a child dies of SIGKILL, running no code,
// the watchdog kills the child's group, as Pdeathsig would on Linux; a
// group the starter stopped watching is left alone.
func TestWatchdog(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^TestWatchdogHelper$")
	helper.Env = append(os.Environ(), envWatchdogHelper+"=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) != 2 {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("helper printed %q, %v", line, err)
	}
	watched, forgotten := atoi(fields[0]), atoi(fields[1])
	t.Cleanup(func() {
		_ = syscall.Kill(-watched, syscall.SIGKILL)
		_ = syscall.Kill(-forgotten, syscall.SIGKILL)
	})
	if !alive(watched) || !alive(forgotten) {
		t.Fatalf("the helper's children are not running: %d %v, %d %v", watched, alive(watched), forgotten, alive(forgotten))
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	waitGone(t, watched, 10*time.Second, fmt.Sprintf("process group %d still runs after its starter was killed", watched))
	if !alive(forgotten) {
		t.Errorf("process group %d, no longer watched, was killed too", forgotten)
	}
}

// The watchdog takes its orders line by line and ignores what it does not
// understand.
func TestRunWatchdog(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pgid := strconv.Itoa(cmd.Process.Pid)
	fmt.Fprintf(w, "+1\n-\nx\n+%s\n+999999999\n-999999999\n+junk\n", pgid)
	w.Close()
	runWatchdog(r)
	r.Close()
	select {
	case err := <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("sleep ended with %v, want SIGKILL", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watched group was not killed when the pipe closed")
	}
}
