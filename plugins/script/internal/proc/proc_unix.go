//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// sysCredential is cred for SysProcAttr; the child keeps the executor's
// supplementary groups (NoSetGroups), as setgroups needs privileges the
// executor may lack.
func sysCredential(cred *Credential) *syscall.Credential {
	if cred == nil {
		return nil
	}
	return &syscall.Credential{Uid: cred.UID, Gid: cred.GID, NoSetGroups: true}
}

// prepare has nothing to add on Unix: the program is executed as it is.
func prepare(*exec.Cmd) error { return nil }
