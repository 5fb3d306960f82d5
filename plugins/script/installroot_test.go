package script

import (
	"path/filepath"
	"testing"
)

// TestInstallRoot: the folder bound into a sandbox for an interpreter
// outside the system dirs is its installation (pyenv, a venv), never the
// user's home (an interpreter in ~/bin) or anything above it.
func TestInstallRoot(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct{ bin, want string }{
		{filepath.Join(home, ".pyenv/versions/3.11.7/bin/python3"), filepath.Join(home, ".pyenv/versions/3.11.7")},
		{filepath.Join(home, "venv/bin/python"), filepath.Join(home, "venv")},
		{filepath.Join(home, "bin/python3"), filepath.Join(home, "bin")},
		{filepath.Join(home, "tools/python3"), filepath.Join(home, "tools")},
		{"/bin/python3", "/bin"},
		{filepath.Join(filepath.Dir(home), "bin/node"), filepath.Join(filepath.Dir(home), "bin")},
	} {
		if got := installRoot(tc.bin); got != tc.want {
			t.Errorf("installRoot(%s) = %s, want %s", tc.bin, got, tc.want)
		}
	}
}
