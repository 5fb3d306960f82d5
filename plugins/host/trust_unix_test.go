//go:build unix

package host_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/host"
)

// TestDiscoverRefusesUntrusted: a plugin that another user could have
// written or could change (a world-writable file or folder, a file of
// another user, a link to such a file) is not run, with an error that says
// why and what to do; a plugin of the gateway's user in a private folder is.
func TestDiscoverRefusesUntrusted(t *testing.T) {
	mk := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	mk(open, "inopen", 0o755)
	elsewhere := mk(open, "target", 0o755)

	mine := t.TempDir()
	mk(mine, "good", 0o755)
	mk(mine, "groupw", 0o775) // a umask of 002: fine
	mk(mine, "worldw", 0o757)
	if err := os.Symlink(elsewhere, filepath.Join(mine, "linked")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"inopen": "writable by every user",
		"target": "writable by every user",
		"worldw": "writable by every user",
		"linked": "writable by every user",
	}
	if os.Getuid() == 0 {
		other := mk(mine, "others", 0o755)
		if err := os.Chown(other, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		want["others"] = "belongs to uid 4242"
	}

	specs, errs := host.Discover([]string{open, mine})
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "good,groupw" {
		t.Errorf("plugins found: %v, want good and groupw only", names)
	}
	for name, why := range want {
		found := false
		for _, err := range errs {
			msg := err.Error()
			if strings.Contains(msg, "/"+name+":") || strings.HasSuffix(strings.SplitN(msg, ":", 2)[0], "/"+name) {
				found = true
				if !errors.Is(err, host.ErrUntrusted) || !strings.Contains(msg, why) {
					t.Errorf("%s: %v; want ErrUntrusted saying %q", name, err, why)
				}
			}
		}
		if !found {
			t.Errorf("no error for %s among:\n%v", name, errs)
		}
	}
}
