//go:build !unix && !windows

package gitsource

// lockFile is a no-op where the system has no file locks: only the
// manager's mutex serializes, within one process.
func lockFile(string, bool, bool) (func(), bool, error) { return func() {}, true, nil }
