//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr makes the child lead its own process group.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}
