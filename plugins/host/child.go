package host

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// ServeBuiltin is the plugin side of a built-in executor launched by this
// package (`skillgate plugin serve NAME`): it serves ex with sdk.Serve and
// makes sure that nothing ex started outlives the process, however it
// ends. It returns, for the process to exit, once the gateway stopped the
// plugin; on SIGTERM, and when its stdin (a pipe from the gateway) closed
// because the gateway died, of SIGKILL say, the process exits from within
// sdk.Serve (SIGINT is left to the gateway, see sdk.Serve). In every case
// it has stopped everything first, through the SDK's shutdown hook
// (sdk.Shutdowner), within the time sdk.Serve gives it (the gateway's kill
// window, less a reserve):
//
//   - on Linux the process becomes a child subreaper, so that a process
//     whose parent dies from now on, even one in a session of its own, is
//     re-parented to it;
//   - ex is shut down: its Shutdown with the SDK's deadline if it is an
//     sdk.Shutdowner, else its Close if it is an io.Closer, waited for
//     until that deadline (an upstream server gets its stdin closed,
//     SIGTERM, then SIGKILL after its grace, shortened to fit);
//   - every process left below this one, and in its session when it leads
//     one (the host starts a plugin in a session of its own), is
//     SIGKILLed: an executor's grandchildren too, which an upstream's
//     parent-death signal does not reach;
//   - the directory go-plugin's host made for the plugin's sockets is
//     removed, which a gateway that was killed leaves behind.
//
// ex keeps the optional interfaces of the SDK it implements (sdk.Watcher,
// sdk.HostUser). log receives what goes wrong during the shutdown; nil
// means slog.Default().
func ServeBuiltin(ex sdk.Executor, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	sdk.Serve(&builtin{Executor: ex, log: log})
}

// builtin wraps a built-in executor for ServeBuiltin.
type builtin struct {
	sdk.Executor
	log *slog.Logger
}

var (
	_ sdk.Watcher    = (*builtin)(nil)
	_ sdk.HostUser   = (*builtin)(nil)
	_ sdk.Shutdowner = (*builtin)(nil)
)

// SetHost implements sdk.HostUser for an executor that is one.
func (b *builtin) SetHost(h sdk.Host) {
	if u, ok := b.Executor.(sdk.HostUser); ok {
		u.SetHost(h)
	}
}

// Watch implements sdk.Watcher for an executor that is one; for another
// it waits, as the SDK does for an executor that is no Watcher.
func (b *builtin) Watch(ctx context.Context, emit func(sdk.Change)) error {
	if w, ok := b.Executor.(sdk.Watcher); ok {
		return w.Watch(ctx, emit)
	}
	<-ctx.Done()
	return nil
}

// Shutdown implements sdk.Shutdowner: see ServeBuiltin.
func (b *builtin) Shutdown(ctx context.Context) error {
	adoptOrphans()
	done := make(chan error, 1)
	go func() {
		switch ex := b.Executor.(type) {
		case sdk.Shutdowner:
			done <- ex.Shutdown(ctx)
		case io.Closer:
			done <- ex.Close()
		default:
			done <- nil
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			b.log.Warn("executor shutdown failed; killing what it started", "error", err)
		}
	case <-ctx.Done():
		b.log.Warn("executor did not stop in time; killing what it started")
	}
	killLeftovers()
	removeSocketDir(os.Getenv(plugin.EnvUnixSocketDir))
	return nil
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
