//go:build unix

package proc

import "syscall"

// sysCredential is cred for SysProcAttr; the child keeps the executor's
// supplementary groups (NoSetGroups), as setgroups needs privileges the
// executor may lack.
func sysCredential(cred *Credential) *syscall.Credential {
	if cred == nil {
		return nil
	}
	return &syscall.Credential{Uid: cred.UID, Gid: cred.GID, NoSetGroups: true}
}
