//go:build unix

package toolstore

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path, so that a CLI and a gateway
// changing the same tools dir take turns.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// oNoFollow makes an open fail on a symlink.
const oNoFollow = syscall.O_NOFOLLOW
