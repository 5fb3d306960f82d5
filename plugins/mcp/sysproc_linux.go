package mcp

import "syscall"

// sysProcAttr puts a child in its own process group (so the whole group can
// be signalled) and has the kernel kill it if the executor dies first: if
// the thread that started it exits (see childproc.Start), which happens only
// when the executor does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
