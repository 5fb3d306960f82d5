//go:build unix

package skills

import (
	"os"
	"syscall"
)

// inode returns fi's inode number, which tells a replaced file from an
// edited one.
func inode(fi os.FileInfo) uint64 {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
