//go:build unix

package services

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

const haveFlock = true

// tryLockFile takes an exclusive flock on the file at path (created when
// missing) without waiting. It returns the open file, which holds the lock
// until it is closed, or nil while another holds it.
func tryLockFile(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, nil
			}
			return nil, err
		}
		// The holder before removed the file as it let go: a lock on a file
		// no longer at path guards nothing.
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, err2
		}
	}
}
