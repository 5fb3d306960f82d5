// Command skillgate is one MCP endpoint in front of many MCP servers and
// executor plugins. See `skillgate --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// version and commit are set at build time with -ldflags "-X
// main.version=... -X main.commit=..." (make build does). A build with VCS
// stamping (the go command's default in a git checkout) has its commit
// without them.
var (
	version = "dev"
	commit  = ""
)

// build is what the binary knows of the source it was built from.
type build struct {
	commit   string // full hash, or "" when unknown
	modified bool   // built from a tree with uncommitted changes
	time     string // the commit's time (RFC 3339), when stamped
}

// readBuild returns the VCS stamp the go command embedded, or else the
// commit -ldflags set.
func readBuild() build {
	b := build{commit: commit}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.commit = s.Value
			case "vcs.modified":
				b.modified = s.Value == "true"
			case "vcs.time":
				b.time = s.Value
			}
		}
	}
	return b
}

// short is a commit hash cut to 12 characters, or "unknown commit".
func short(commit string) string {
	switch {
	case commit == "":
		return "unknown commit"
	case len(commit) > 12:
		return commit[:12]
	}
	return commit
}

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := (<-sigs).(syscall.Signal); ok {
			cancel(interrupted{sig})
		}
	}()
	err := newRootCmd().ExecuteContext(ctx)
	os.Exit(exitStatus(ctx, err, os.Stderr))
}

// interrupted is the cause of the commands' context once a signal (Ctrl-C,
// SIGTERM) asks the CLI to stop.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string { return "interrupted by " + i.sig.String() }

// exitStatus is the process's exit status for the error a command ran
// into, printed to stderr unless the command already said why. A command
// a signal ended with an error (of its own or as a result) says so in one
// line and exits 128 + the signal's number, as a shell reports it (130 for
// Ctrl-C); one that ended cleanly, as run does on Ctrl-C, exits 0.
func exitStatus(ctx context.Context, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if i, ok := context.Cause(ctx).(interrupted); ok {
		fmt.Fprintln(stderr, "skillgate: interrupted")
		return 128 + int(i.sig)
	}
	var ee exitError
	if errors.As(err, &ee) {
		return int(ee)
	}
	fmt.Fprintln(stderr, "skillgate:", errorText(err))
	return 1
}

// errorText is err as the CLI prints it. A JSON-RPC error whose message
// starts with its own code, as the TypeScript SDK's do ("MCP error -32602:
// ..."), shows the code once.
func errorText(err error) string {
	s := err.Error()
	var rpc *sdk.RPCError
	if errors.As(err, &rpc) {
		if msg, ok := strings.CutPrefix(rpc.Message, fmt.Sprintf("MCP error %d: ", rpc.Code)); ok {
			s = strings.Replace(s, rpc.Error(), (&sdk.RPCError{Code: rpc.Code, Message: msg}).Error(), 1)
		}
	}
	return s
}

// exitError ends the process with a status after the command already said why.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
