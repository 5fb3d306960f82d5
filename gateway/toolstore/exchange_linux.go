package toolstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps the folders a and b in one step (renameat2 with
// RENAME_EXCHANGE), so b is never missing. File systems without it fall
// back to two renames.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return exchangeByRename(a, b)
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
