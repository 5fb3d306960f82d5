//go:build !linux

package childproc

import "syscall"

// Tree is Linux only (it needs /proc): elsewhere it tracks nothing, and
// only what a child's Group holds (its process group, or its job object on
// Windows) is signalled with it.
type Tree struct{}

// NewTree returns a Tree that tracks nothing.
func NewTree(int) *Tree { return &Tree{} }

// Scan does nothing off Linux.
func (*Tree) Scan() {}

// Signal does nothing off Linux.
func (*Tree) Signal(syscall.Signal) {}

// Kill does nothing off Linux.
func (*Tree) Kill() {}
