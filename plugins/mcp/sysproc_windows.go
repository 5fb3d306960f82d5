package mcp

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// sysProcAttr starts a server without a console window of its own (one
// would flash up for every server of a gateway that has no console, as
// under Claude Desktop); its stdio are pipes anyway. Windows has no process
// groups: the server is put in a job object once it started instead (see
// childproc.Start), which also ends it when the executor dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW}
}
