package childproc

import (
	"os"
	"strings"

	"github.com/skillgate/skillgate/internal/nested"
)

// unixEnvKeys are the variables a child inherits on Unix. nested.EnvKey
// goes down to every child: a gateway started by one refuses to serve the
// config of a gateway above it.
var unixEnvKeys = []string{"PATH", "HOME", "TMPDIR", "LANG", nested.EnvKey}

// windowsEnvKeys are the variables a child inherits on Windows: what
// programs need to find the system (SystemRoot: Winsock and crypto fail to
// load without it; ComSpec, PATHEXT), the user's folders (npm keeps its
// cache under LOCALAPPDATA and global packages under APPDATA, uv under
// LOCALAPPDATA) and temporary files, and where programs are installed. None
// holds a secret.
var windowsEnvKeys = []string{
	"PATH", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec",
	"TEMP", "TMP", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "USERNAME", "USERDOMAIN", "COMPUTERNAME",
	"APPDATA", "LOCALAPPDATA", "ProgramData", "ALLUSERSPROFILE", "PUBLIC",
	"ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
	"CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432",
	"OS", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "LANG", nested.EnvKey,
}

// Env is the clean environment a child process starts from: the variables
// of this process's environment that a child may inherit on this system
// (unixEnvKeys, windowsEnvKeys), as KEY=value entries, and the marks of
// the trees this process belongs to (see TreeEnvPrefix).
func Env() []string {
	environ := os.Environ()
	return append(inherit(environ, envKeys, foldEnv), treeMarks(environ)...)
}

// SetEnv sets key to value in env, replacing the entries of the same name
// (compared without case on Windows, where names are case-insensitive),
// and returns the result.
func SetEnv(env []string, key, value string) []string { return setEnv(env, key, value, foldEnv) }

// LookupEnv returns the value of key in env (compared without case on
// Windows); the last entry wins, as it does for os/exec.
func LookupEnv(env []string, key string) (string, bool) { return lookupEnv(env, key, foldEnv) }

// inherit returns the entries of environ named in keys, in environ's
// order, spelled as environ spells them.
func inherit(environ, keys []string, fold bool) []string {
	var env []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue // Windows lists "=C:=C:\dir" entries: per-drive directories
		}
		for _, want := range keys {
			if sameKey(k, want, fold) {
				env = append(env, kv)
				break
			}
		}
	}
	return env
}

func setEnv(env []string, key, value string, fold bool) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !sameKey(k, key, fold) {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

func lookupEnv(env []string, key string, fold bool) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(env[i], "="); sameKey(k, key, fold) {
			return v, true
		}
	}
	return "", false
}

func sameKey(a, b string, fold bool) bool {
	if fold {
		return strings.EqualFold(a, b)
	}
	return a == b
}
