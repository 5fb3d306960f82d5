//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr makes the child lead its own process group.
func sysProcAttr(cred *Credential) (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setpgid: true, Credential: sysCredential(cred)}, nil
}
