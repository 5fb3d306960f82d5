//go:build unix

package wasm

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in its own process group and kills the whole group on
// cancel, so a compiler's children do not outlive it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
