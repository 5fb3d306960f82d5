package mcp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolveCommandRelative: a relative command with a relative cwd
// becomes one absolute path, since the child changes into cwd before exec
// (a relative path would be resolved against cwd twice).
func TestResolveCommandRelative(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ command, cwd, want string }{
		{"./bin/server", "sub/dir", filepath.Join(wd, "sub/dir/bin/server")},
		{"bin/server", "", filepath.Join(wd, "bin/server")},
		{"/abs/server", "sub", "/abs/server"},
	} {
		got, err := resolveCommand(tc.command, tc.cwd, nil)
		if err != nil || got != tc.want {
			t.Errorf("resolveCommand(%q, %q) = %q, %v; want %q", tc.command, tc.cwd, got, err, tc.want)
		}
	}
}
