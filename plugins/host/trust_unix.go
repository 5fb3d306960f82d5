//go:build unix

package host

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// checkTrusted refuses a plugin file that someone other than the gateway's
// user (or root) could have put there or changed: the file, the folder it
// was found in, and, for a symbolic link, the real file and its folder must
// be owned by the gateway's user or root and not writable by other users
// (group-writable is allowed, as with a umask of 002). A plugin runs with
// the gateway's rights, so whoever can write it can run code as the
// gateway; ssh refuses keys on the same grounds (StrictModes).
func checkTrusted(path string) error {
	uid := os.Getuid()
	check := func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if int(st.Uid) != uid && st.Uid != 0 {
			return fmt.Errorf("%s belongs to uid %d, not to the gateway's user (uid %d) or root: %w; chown it, or take the plugin out of the plugins dir",
				p, st.Uid, uid, ErrUntrusted)
		}
		if fi.Mode().Perm()&0o002 != 0 {
			return fmt.Errorf("%s is writable by every user (mode %#o): %w; chmod o-w it", p, fi.Mode().Perm(), ErrUntrusted)
		}
		return nil
	}
	paths := []string{path, filepath.Dir(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		paths = append(paths, real, filepath.Dir(real))
	}
	for _, p := range paths {
		if err := check(p); err != nil {
			return err
		}
	}
	return nil
}
