package proc

import (
	"errors"
	"syscall"
)

// sysProcAttr asks for nothing: the child is put in a job object once it
// started (see childproc.Start). Windows has no numeric user to run as.
func sysProcAttr(cred *Credential) (*syscall.SysProcAttr, error) {
	if cred != nil {
		return nil, errors.New("running a process as another user (UID:GID, limits.sandbox_user) is not supported on windows; remove limits.sandbox_user")
	}
	return nil, nil
}
