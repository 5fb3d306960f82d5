//go:build !linux && !darwin

package childproc

import "syscall"

// Tree needs a process table to read (Linux, macOS): elsewhere it tracks
// nothing, and only what a child's Group holds (its job object on Windows)
// is signalled with it.
type Tree struct{}

// NewTree returns a Tree that tracks nothing.
func NewTree(int) *Tree { return &Tree{} }

// Scan does nothing here.
func (*Tree) Scan() {}

// Signal does nothing here.
func (*Tree) Signal(syscall.Signal) {}

// Kill does nothing here.
func (*Tree) Kill() {}
