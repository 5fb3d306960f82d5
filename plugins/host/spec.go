package host

import (
	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/internal/names"
	"github.com/skillgate/skillgate/plugins/sdk"

	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Spec says how to launch one executor plugin.
//
// A built-in executor is the skillgate binary itself, re-executed with the
// hidden arguments its cmd layer serves it under:
//
//	self, _ := os.Executable()
//	host.Spec{Name: "mcp", Path: self, Args: []string{"plugin", "serve", "mcp"}}
//
// A third-party executor is a binary from a plugins dir (see Discover).
type Spec struct {
	// Name identifies the executor in logs, errors and the manager; it must
	// match [a-zA-Z0-9_-]{1,64}.
	Name string
	// Path is the program to run; a bare name is looked up in PATH.
	Path string
	// Args are the program's arguments, without the program name.
	Args []string
	// Env is added to the child's environment as KEY=value entries. The
	// child never inherits the gateway's environment: it gets only PATH,
	// HOME, TMPDIR and LANG from it (on Windows also SystemRoot, PATHEXT,
	// APPDATA and the like: see childproc.Env), then the SDK's variables
	// (sdk.EnvExitOnStdinEOF, sdk.EnvKillWindow), then Env (which may
	// override those), then what go-plugin needs for the handshake.
	Env []string
}

func checkName(name string) error {
	if !names.Valid(name) {
		return fmt.Errorf("%w %q: use 1 to 64 letters, digits, '-' or '_'", ErrInvalidName, name)
	}
	return nil
}

// childEnv is the environment of a plugin process, before go-plugin adds
// its handshake variables. window is the kill window it is told about.
func childEnv(window time.Duration, extra []string) []string {
	env := childproc.Env()
	// The plugin's stdin is a pipe from the gateway; this tells sdk.Serve to
	// exit when it closes, so a killed gateway leaves no executor behind.
	env = append(env, sdk.EnvExitOnStdinEOF+"=1")
	// and this how long it has to stop once asked to (sdk.Shutdowner).
	env = append(env, sdk.EnvKillWindow+"="+window.String())
	return append(env, extra...)
}

// resolvePath finds a program given by bare name in PATH, as a shell would;
// other paths are used as they are.
func resolvePath(path string) (string, error) {
	if path == "" {
		return "", errors.New("no program path given")
	}
	if filepath.Base(path) != path {
		return path, nil
	}
	return exec.LookPath(path) // refuses a match relative to the current directory (exec.ErrDot)
}

// checkExecutable explains up front why path cannot be run, so a missing or
// non-executable binary is not reported as a failed handshake.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w; check the path, or install the plugin", path, fs.ErrNotExist)
	}
	if err != nil {
		return err // *fs.PathError naming the path
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (mode %s): %w", path, fi.Mode(), ErrNotExecutable)
	}
	if !executable(path, fi.Mode()) {
		return fmt.Errorf("%s: %w (mode %s); make it executable (chmod +x)", path, ErrNotExecutable, fi.Mode())
	}
	return nil
}

// Discover finds third-party executors: every executable regular file
// directly in one of dirs (symbolic links followed, subdirectories and
// dot files skipped) is an executor named after its file name without the
// extension ("hello.sh" is "hello"). Problems — a dir that cannot be read, a
// file that is not executable, a file another user could change (see
// checkTrusted), a name that is not valid or already taken by an earlier
// file — are returned as errors next to the executors that were
// found; none stops the search. Paths in the result are absolute.
func Discover(dirs []string) ([]Spec, []error) {
	var (
		specs []Spec
		errs  []error
		seen  = map[string]string{}
	)
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("plugins dir: %w", err))
			continue
		}
		for _, e := range entries {
			file := e.Name()
			if strings.HasPrefix(file, ".") {
				continue
			}
			path, err := filepath.Abs(filepath.Join(dir, file))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			fi, err := os.Stat(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("plugin %s: %w", path, err))
				continue
			}
			if fi.IsDir() {
				continue
			}
			if err := checkExecutable(path); err != nil {
				errs = append(errs, fmt.Errorf("plugin %w; or move it out of the plugins dir", err))
				continue
			}
			if err := checkTrusted(path); err != nil {
				errs = append(errs, fmt.Errorf("plugin %s: %w", path, err))
				continue
			}
			name := strings.TrimSuffix(file, filepath.Ext(file))
			if err := checkName(name); err != nil {
				errs = append(errs, fmt.Errorf("plugin %s: %w; rename the file", path, err))
				continue
			}
			if prev, ok := seen[name]; ok {
				errs = append(errs, fmt.Errorf("plugin %s: %w: %q is already %s; rename one of them", path, ErrDuplicate, name, prev))
				continue
			}
			seen[name] = path
			specs = append(specs, Spec{Name: name, Path: path})
		}
	}
	return specs, errs
}
