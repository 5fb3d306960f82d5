//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr makes the child lead its own process group. There is no
// parent-death signal here: childproc.Start has a watchdog process kill
// the group if the executor dies first.
func sysProcAttr(cred *Credential) (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setpgid: true, Credential: sysCredential(cred)}, nil
}
