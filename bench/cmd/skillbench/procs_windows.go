package main

import (
	"os"
	"syscall"
)

// groupAttr asks for nothing: Windows has no process groups.
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the process pgid alone.
func killGroup(pgid int) { killPID(pgid) }

// killPID kills one process.
func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
