//go:build !(linux && (amd64 || arm64))

package skills

import "os"

// statPath stats a NUL-terminated path. Off Linux it goes through os.Stat,
// which allocates.
func statPath(path []byte, st *stamp) bool {
	fi, err := os.Stat(string(path[:len(path)-1]))
	if err != nil {
		*st = stamp{}
		return false
	}
	*st = stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size(), ino: inode(fi), ok: true}
	return true
}
