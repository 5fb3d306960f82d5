//go:build unix && !linux

package mcp

import "syscall"

// sysProcAttr puts a child in its own process group, so the whole group can
// be signalled. There is no parent-death signal here: childproc.Start has a
// watchdog process kill the group if the executor dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
