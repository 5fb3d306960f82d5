//go:build unix

package host

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveSocketDir(t *testing.T) {
	for _, tc := range []struct {
		name     string
		base     string
		file     bool // a regular file next to the socket
		wantDir  bool // the directory is left
		wantSock bool // the socket is left
	}{
		{"go-plugin's directory", "plugin-dir123", false, false, false},
		{"a file in it", "plugin-dir123", true, true, false},
		{"another directory", "sockets", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A short path: a socket's must fit in sun_path.
			root, err := os.MkdirTemp("", "sg")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			dir := filepath.Join(root, tc.base)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "plugin1")
			l, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
			if tc.file {
				if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			removeSocketDir(dir)
			if _, err := os.Lstat(dir); (err == nil) != tc.wantDir {
				t.Errorf("directory left: %v, want %v", err == nil, tc.wantDir)
			}
			if _, err := os.Lstat(sock); (err == nil) != tc.wantSock {
				t.Errorf("socket left: %v, want %v", err == nil, tc.wantSock)
			}
		})
	}
	removeSocketDir("") // no directory given: nothing to do
}
