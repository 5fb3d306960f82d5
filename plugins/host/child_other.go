//go:build !linux

package host

// adoptOrphans is Linux only (PR_SET_CHILD_SUBREAPER).
func adoptOrphans() {}

// killLeftovers is Linux only (it needs /proc): elsewhere ServeBuiltin
// relies on the executor's Close alone.
func killLeftovers() {}
