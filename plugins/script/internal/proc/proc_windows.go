package proc

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/skillgate/skillgate/internal/childproc"
)

// sysProcAttr starts the child without a console window of its own (one
// would flash up for every call of a gateway that has no console); the
// child is put in a job object once it started (see childproc.Start).
// Windows has no numeric user to run as.
func sysProcAttr(cred *Credential) (*syscall.SysProcAttr, error) {
	if cred != nil {
		return nil, errors.New("running a process as another user (UID:GID, limits.sandbox_user) is not supported on windows; remove limits.sandbox_user")
	}
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW}, nil
}

// prepare runs a batch script (an interpreter or entry point named x.cmd)
// under cmd.exe with arguments quoted so that cmd.exe reads them as text,
// and refuses one it cannot quote: a tool's arguments come from the model
// (see childproc.WrapBatch).
func prepare(cmd *exec.Cmd) error { return childproc.WrapBatch(cmd) }
