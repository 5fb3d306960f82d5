package toolspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideFolder means a path names something outside its tool folder.
var ErrOutsideFolder = errors.New("outside the tool folder")

// Resolve returns the absolute, symlink-free path of the regular file rel
// inside the tool folder dir. It fails when rel is absolute, climbs out with
// "..", resolves (through symlinks) to something outside dir, or is not a
// regular file. Executors call it again right before running a file, since
// the folder may have changed since Load.
func Resolve(dir, rel string) (string, error) {
	return resolve(dir, rel, true)
}

func resolve(dir, rel string, wantFile bool) (string, error) {
	if msg := relPathProblem(rel); msg != "" {
		return "", fmt.Errorf("%s: %w", msg, ErrOutsideFolder)
	}
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", fmt.Errorf("tool folder %q: %w", dir, err)
	}
	full, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%q does not exist in the tool folder %s", rel, root)
		}
		return "", fmt.Errorf("%q: %w", rel, err)
	}
	if full != root && !strings.HasPrefix(full, root+string(filepath.Separator)) {
		return "", fmt.Errorf("%q resolves to %s through a symlink, which is %w %s; copy the file into the folder instead",
			rel, full, ErrOutsideFolder, root)
	}
	if wantFile {
		fi, err := os.Stat(full)
		if err != nil {
			return "", fmt.Errorf("%q: %w", rel, err)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%q is not a regular file", rel)
		}
	}
	return full, nil
}

func statFile(p string) (fs.FileInfo, error) { return os.Stat(p) }
