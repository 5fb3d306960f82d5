package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/plugins/toolspec"
)

// systemDirs are bound read-only into every sandbox when they exist.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// etcFiles are the parts of /etc programs need; the rest of /etc (shadow,
// keys, configs) stays out of the sandbox.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/localtime",
	"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/mime.types", "/etc/os-release",
}

// sandboxArgs is the bubblewrap command line that wraps the interpreter:
// every namespace unshared (the network kept only when allowed), the
// system read-only, a private /tmp, /proc and /dev of its own, a new
// session (no terminal injection), death with the executor, the tool folder
// and installed dependencies read-only, the state dir writable.
func (t *tool) sandboxArgs(deps *installed) []string {
	sb := t.spec.Tool.Sandbox
	a := []string{"bwrap", "--unshare-all", "--die-with-parent", "--new-session"}
	if sb.Network {
		a = append(a, "--share-net")
		a = append(a, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf")
	}
	for _, d := range systemDirs {
		a = append(a, "--ro-bind-try", d, d)
	}
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", f, f)
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	// An interpreter installed outside the system dirs (pyenv, nvm, a
	// venv) is bound read-only at the same place.
	if len(t.interp) > 0 && !underAny(t.interp[0], systemDirs) {
		a = append(a, "--ro-bind", installRoot(t.interp[0]), installRoot(t.interp[0]))
	}
	if deps != nil {
		a = append(a, "--ro-bind", deps.dir, deps.dir)
	}
	for _, m := range sb.Mounts {
		src := m.Path
		if !filepath.IsAbs(src) {
			src = filepath.Join(t.spec.Dir, src)
		}
		at := m.At
		if at == "" {
			at = src
		}
		a = append(a, "--ro-bind", src, at)
	}
	a = append(a,
		"--ro-bind", t.spec.Dir, t.spec.Dir,
		"--bind", t.spec.StateDir, t.spec.StateDir,
		"--chdir", t.spec.Dir,
		"--")
	return a
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// installRoot is the directory that holds an interpreter's installation:
// the parent of its bin directory, or its own directory. A parent that is
// the home directory or above it (an interpreter in ~/bin or /bin-like
// folders of a user's own) is not an installation: binding it would show
// the sandbox the whole home, so only the bin directory is bound.
func installRoot(bin string) string {
	dir := filepath.Dir(bin)
	if filepath.Base(dir) != "bin" {
		return dir
	}
	root := filepath.Dir(dir)
	if tooBroad(root) {
		return dir
	}
	return root
}

// tooBroad reports whether binding dir into a sandbox would show it the
// user's home directory, or all of the file system.
func tooBroad(dir string) bool {
	if dir == "/" || dir == "." {
		return true
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return false
	}
	home = filepath.Clean(home)
	return dir == home || strings.HasPrefix(home, dir+"/")
}

// ulimitArgs is the prlimit(1) command line that applies the tool's
// ulimits to the whole process tree (limits are inherited across fork and
// exec), or nothing.
func (t *tool) ulimitArgs() []string {
	u := t.spec.Tool.Ulimits
	if u == (toolspec.Ulimits{}) {
		return nil
	}
	a := []string{"prlimit"}
	if u.Memory > 0 {
		a = append(a, fmt.Sprintf("--as=%d", u.Memory))
	}
	if u.Processes > 0 {
		a = append(a, fmt.Sprintf("--nproc=%d", u.Processes))
	}
	if u.OpenFiles > 0 {
		a = append(a, fmt.Sprintf("--nofile=%d", u.OpenFiles))
	}
	if u.CPU > 0 {
		a = append(a, fmt.Sprintf("--cpu=%d", max(1, int64(u.CPU.Std().Seconds()))))
	}
	if u.FileSize > 0 {
		a = append(a, fmt.Sprintf("--fsize=%d", u.FileSize))
	}
	return append(a, "--")
}

// runningAsRoot reports whether the executor runs as root, where the
// kernel ignores RLIMIT_NPROC.
func runningAsRoot() bool { return os.Geteuid() == 0 }
