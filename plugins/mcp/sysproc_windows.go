package mcp

import "syscall"

// sysProcAttr asks for nothing: Windows has no process groups, and the
// server is put in a job object once it started instead (see
// childproc.Start), which also ends it when the executor dies.
func sysProcAttr() *syscall.SysProcAttr { return nil }
