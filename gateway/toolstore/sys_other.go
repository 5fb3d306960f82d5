//go:build !unix

package toolstore

// lockFile is a no-op where flock is missing: only the in-process mutex
// serializes changes.
func lockFile(string) (func(), error) { return func() {}, nil }

const oNoFollow = 0
