//go:build !linux

package host

// adoptOrphans is Linux only (PR_SET_CHILD_SUBREAPER): elsewhere a process
// orphaned below the executor goes to init (launchd on macOS), where
// killLeftovers finds it only by its session.
func adoptOrphans() {}
