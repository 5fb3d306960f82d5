//go:build unix

package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// resolveCommand finds the program to run: a name without a slash in the
// PATH of env (absolute entries only), with its executable bit set; a
// relative path against cwd.
func resolveCommand(command, cwd string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		if !filepath.IsAbs(command) && cwd != "" {
			command = filepath.Join(cwd, command)
		}
		// Absolute: the child changes into cwd before exec, so a relative
		// path would be resolved against cwd a second time.
		return filepath.Abs(command)
	}
	path := envValue(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH %q; give its full path or set env.PATH", command, path)
}

// stdinPipe is the pipe of a server's stdin: the read end for the child,
// the write end ours. On Unix os.Pipe's write end takes write deadlines.
func stdinPipe() (r, w *os.File, err error) { return os.Pipe() }

// prepare has nothing to add on Unix: the program is executed as it is.
func prepare(*exec.Cmd) error { return nil }
