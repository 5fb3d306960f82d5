package testenv

import (
	"os"
	"testing"
	"time"
)

// WaitForFile waits until path exists, for tests that order work across
// processes with marker files (a process creates one when it reached a
// point). It fails the test after timeout, or as soon as ended yields: the
// work that was to create the file finished without doing so. ended may be
// nil.
func WaitForFile(t testing.TB, path string, timeout time.Duration, ended <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-ended:
			t.Fatalf("what was to create %s ended first: %v", path, err)
		default:
		}
	}
	t.Fatalf("%s did not appear within %v", path, timeout)
}
