package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/childproc"
)

// command builds the process that runs spec's stdio server with env; the
// caller sets its standard streams. It runs no shell: on Windows a .cmd or
// .bat script (npx.cmd) runs under cmd.exe with every argument quoted, and
// is refused where quoting cannot keep an argument text (see
// childproc.BatchCommandLine).
func command(spec *Spec, env []string) (*exec.Cmd, error) {
	path, err := resolveCommand(spec.Command, spec.Cwd, env)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{spec.Command}, spec.Args...),
		Env:         env,
		Dir:         spec.Cwd,
		SysProcAttr: sysProcAttr(),
	}
	if err := prepare(cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// childEnv is the clean environment of a stdio server: the variables of
// the executor's environment that childproc.Env passes on (PATH, HOME,
// TMPDIR and LANG on Unix; on Windows also SystemRoot, PATHEXT, APPDATA
// and the like, without which programs fail), then those of each layer
// in turn (the spec's Environ, then its Env), which replace them (without
// regard to case on Windows, where Path is PATH).
func childEnv(layers ...map[string]string) []string {
	env := childproc.Env()
	for _, extra := range layers {
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		sort.Strings(keys) // on Windows, of "Path" and "PATH" the last wins
		for _, k := range keys {
			env = childproc.SetEnv(env, k, extra[k])
		}
	}
	sort.Strings(env)
	return env
}

func envValue(env []string, key string) string {
	v, _ := childproc.LookupEnv(env, key)
	return v
}

// pathExts lists the extensions of a PATHEXT value, lower-case and with
// their dot, in order; those Windows uses when PATHEXT is not set if it
// names none.
func pathExts(pathext string) []string {
	var exts []string
	for _, e := range strings.Split(pathext, ";") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		if !slices.Contains(exts, e) {
			exts = append(exts, e)
		}
	}
	if len(exts) == 0 {
		return []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

// lookPathExt finds a program the way Windows does, with the executor's
// rules on top: a command with a path separator (or a drive) is taken
// against cwd; a bare name is looked up in each absolute directory of dirs
// in order (relative ones, like the current directory Windows itself
// searches first, are skipped). In a directory, the name as given comes
// first when it already ends in an extension of PATHEXT, then the name
// with each extension of PATHEXT in PATHEXT's order: "npx" is npx.cmd
// where npm put npx, npx.cmd and npx.ps1. No executable bit is asked for;
// Windows has none. Extensions are tried lower-case, which Windows file
// systems match without regard to case.
func lookPathExt(command, cwd string, dirs []string, pathext string) (string, error) {
	exts := pathExts(pathext)
	if strings.ContainsAny(command, `/\`) || filepath.VolumeName(command) != "" {
		p := command
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		// Absolute: the child starts in cwd, where a relative path would be
		// resolved against cwd a second time.
		p, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		if f, ok := findWithExt(p, exts); ok {
			return f, nil
		}
		return "", fmt.Errorf("command %q: found neither %s nor it with an extension of PATHEXT (%s); check the path",
			command, p, strings.Join(exts, ";"))
	}
	for _, dir := range dirs {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if f, ok := findWithExt(filepath.Join(dir, command), exts); ok {
			return f, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH %q with any extension of PATHEXT (%s); give its full path or set env.PATH",
		command, strings.Join(dirs, string(filepath.ListSeparator)), strings.Join(exts, ";"))
}

func findWithExt(p string, exts []string) (string, bool) {
	if ext := strings.ToLower(filepath.Ext(p)); ext != "" && slices.Contains(exts, ext) && isFile(p) {
		return p, true
	}
	for _, ext := range exts {
		if isFile(p + ext) {
			return p + ext, true
		}
	}
	return "", false
}

// isFile reports whether p exists and is no directory. Irregular files
// count: the python.exe that the Microsoft Store puts in WindowsApps is an
// app execution alias, a reparse point os.Stat does not call regular.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// windowsRunnable refuses what the executor does not start on Windows: a
// file other than a program (.exe, .com) or a batch script (.cmd, .bat,
// run under cmd.exe by childproc.WrapBatch), such as a .js or .ps1 that
// PATHEXT names, which would run through a file association.
func windowsRunnable(path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".exe" || ext == ".com" || childproc.IsBatch(path):
		return nil
	}
	return fmt.Errorf("command %s is not a program (.exe, .com) or a batch script (.cmd, .bat); Windows would run it through "+
		"a file association, which skillgate does not use: make command its interpreter (node, python, powershell.exe -File) and the file its first argument", path)
}
