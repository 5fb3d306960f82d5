package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// prepareGroup bounds how long Wait waits for grandchildren that hold the
// output pipes open. Windows has no process groups: only the process
// itself is killed.
func prepareGroup(cmd *exec.Cmd) {
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return killGroup(cmd, syscall.SIGKILL) }
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
}

// killGroup kills cmd's process for SIGKILL; Windows cannot deliver other
// signals, so they do nothing. A process that is already gone is not an
// error.
func killGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil || sig != syscall.SIGKILL {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// signalGroup is Signal: Windows has no process groups.
func signalGroup(pid int, sig syscall.Signal) error { return Signal(pid, sig) }

// Signal kills process pid for SIGKILL; Windows cannot send other signals,
// so for them it returns an error that says so.
func Signal(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return fmt.Errorf("send %v to process %d: windows has no signals but SIGKILL", sig, pid)
	}
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("kill process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	return windows.TerminateProcess(h, 1)
}

// Setsid does nothing: Windows has no sessions to leave.
func Setsid(*exec.Cmd) {}
