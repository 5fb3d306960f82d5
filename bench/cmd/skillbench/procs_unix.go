//go:build unix

package main

import "syscall"

// groupAttr makes a started process lead its own process group.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup SIGKILLs the process group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// killPID SIGKILLs one process.
func killPID(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
