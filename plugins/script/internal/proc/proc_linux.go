package proc

import "syscall"

// sysProcAttr makes the child lead its own process group and has the
// kernel kill it if the thread that started it exits (see childproc.Start),
// which happens only when the executor does.
func sysProcAttr(cred *Credential) (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: sysCredential(cred)}, nil
}
