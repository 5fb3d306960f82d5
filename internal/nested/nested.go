// Package nested keeps a gateway from serving itself. A gateway started by
// a gateway (a server entry whose command runs skillgate, often imported
// from a desktop client's config where skillgate itself is listed) with
// the same config would start another one, and so on without end.
//
// Each `skillgate run` calls Enter with its config before it starts
// anything: Enter refuses when that config is already served by one of
// the gateways above it, and otherwise adds it to EnvKey, which every
// child process inherits (see internal/childproc), servers included.
//
//	if err := nested.Enter(cfg.Source); err != nil {
//		return err // started by a gateway serving this very config
//	}
package nested

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// EnvKey is the variable that lists the configs of the gateways a process
// runs under, outermost first, separated by os.PathListSeparator.
const EnvKey = "SKILLGATE_GATEWAY_CONFIGS"

// Enter checks that no gateway above this process serves config (a
// config file's path, or a name such as "<builtin>"), then records it in
// this process's EnvKey for the children it starts. It returns an error
// saying what to remove when one does. The gateways above are those of
// EnvKey as the process inherited it: calling Enter again (a command run
// twice in one process, as tests do) checks against them, not against
// the config of the previous call.
func Enter(config string) error {
	v, err := enter(inherited(), config)
	if err != nil {
		return err
	}
	return os.Setenv(EnvKey, v)
}

// inherited is EnvKey as the process found it, before its first Enter.
var inherited = sync.OnceValue(func() []string { return filepath.SplitList(os.Getenv(EnvKey)) })

// enter returns the value of EnvKey for the children of a gateway of
// config under the gateways of chain, or the error when one of them
// serves config.
func enter(chain []string, config string) (string, error) {
	id := identity(config)
	if slices.Contains(chain, id) {
		return "", fmt.Errorf("not starting: this gateway was launched as an MCP server by a skillgate gateway that serves the same config (%s), "+
			"and would launch itself again without end; remove the server entry whose command runs skillgate from %s "+
			"(skillgate import leaves such entries out)", id, config)
	}
	return strings.Join(append(slices.Clone(chain), id), string(os.PathListSeparator)), nil
}

// identity names config the same however it was written: an absolute
// path with symlinks resolved.
func identity(config string) string {
	if config == "" || strings.HasPrefix(config, "<") {
		return config
	}
	p, err := filepath.Abs(config)
	if err != nil {
		return config
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}
