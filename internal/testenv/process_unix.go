//go:build unix

package testenv

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// prepareGroup makes cmd lead its own process group, so that killing the
// group also kills what it started, and bounds how long Wait waits for
// grandchildren that hold its output pipes open.
func prepareGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return killGroup(cmd, syscall.SIGKILL) }
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
}

// killGroup signals cmd's process group; a group that is already gone is not an error.
func killGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := signalGroup(cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// Signal sends sig to process pid.
func Signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// Setsid makes cmd start a session of its own, and so leave its parent's
// process group and session.
func Setsid(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}
