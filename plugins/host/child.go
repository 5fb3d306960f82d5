package host

import (
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// closeLimit bounds the wait for the executor's Close before what it
// started is killed anyway: well beyond an upstream's shutdown grace, but
// once the gateway is gone nothing else would ever stop the process.
const closeLimit = time.Minute

// ServeBuiltin is the plugin side of a built-in executor launched by this
// package (`skillgate plugin serve NAME`): it serves ex with sdk.Serve and
// makes sure that nothing ex started outlives the process, however the
// gateway ends. It returns, for the process to exit, once one of these
// happened:
//
//   - the gateway stopped the plugin (sdk.Serve returned);
//   - the process got SIGTERM (SIGINT is left to the gateway, see
//     sdk.Serve);
//   - its stdin, a pipe from the gateway, closed: the gateway died, of
//     SIGKILL say, and cannot stop the plugin any more. This replaces the
//     SDK's exit on stdin EOF ([sdk.EnvExitOnStdinEOF]), which exits at
//     once and so leaves the grandchildren of the executor behind: an
//     upstream's leader dies of its parent-death signal, but not its own
//     children.
//
// and it has stopped everything: ex is closed if it is an io.Closer (an
// upstream's process group gets its stdin closed, SIGTERM, then SIGKILL
// after its grace), for at most a minute; then every process left below
// this one, and in its session when it leads one (the host starts a plugin
// in a session of its own), is SIGKILLed. On Linux the process becomes a
// child subreaper before the Close, so a process whose parent is killed
// during the shutdown, even one in a session of its own, is re-parented to
// it and killed too. Last, it removes the directory go-plugin's host made
// for the plugin's sockets, which a gateway that was killed leaves behind.
// log receives why the plugin stops; nil means slog.Default().
func ServeBuiltin(ex sdk.Executor, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	// A write to stderr with the gateway gone must fail, not kill the
	// process with SIGPIPE halfway through its shutdown.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	gone := make(chan struct{})
	if os.Getenv(sdk.EnvExitOnStdinEOF) == "1" {
		_ = os.Unsetenv(sdk.EnvExitOnStdinEOF) // ours to handle, not sdk.Serve's
		go func() {
			_, _ = io.Copy(io.Discard, pollableStdin())
			close(gone)
		}()
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		sdk.Serve(ex)
	}()

	select {
	case <-served:
	case <-term:
		log.Info("executor stopping: SIGTERM")
	case <-gone:
		log.Warn("executor stopping: the gateway is gone (its pipe on stdin closed)")
	}
	adoptOrphans()
	if c, ok := ex.(io.Closer); ok {
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			_ = c.Close()
		}()
		t := time.NewTimer(closeLimit)
		select {
		case <-closed:
		case <-t.C:
			log.Warn("executor did not stop in time; killing what it started", "limit", closeLimit)
		}
		t.Stop()
	}
	killLeftovers()
	removeSocketDir(os.Getenv(plugin.EnvUnixSocketDir))
}

// removeSocketDir removes dir, the directory go-plugin's host made for the
// plugin's sockets and removes itself once the plugin exited, unless it was
// killed first. Only a directory named as go-plugin names it is touched,
// only sockets are removed from it, and it goes only if that leaves it
// empty: a stray value of the variable must not cost anyone a file.
func removeSocketDir(dir string) {
	if dir == "" || !strings.HasPrefix(filepath.Base(dir), "plugin-dir") {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket != 0 {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	_ = os.Remove(dir)
}
