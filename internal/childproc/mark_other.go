//go:build !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// mark would mark a child's tree; only Linux's /proc lets this package
// read another process's environment, so no tree is marked elsewhere
// (macOS, Windows, where a job object holds the tree instead).
type mark struct{}

func markTree(*exec.Cmd) *mark           { return nil }
func (*mark) rooted(int)                 {}
func (*mark) signal(int, syscall.Signal) {}
func (*mark) kill()                      {}
