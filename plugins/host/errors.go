package host

import (
	"errors"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Sentinel errors. Errors returned by this package wrap them with the
// executor's name and what to do next.
var (
	// ErrClosed means the plugin or manager was closed. It matches
	// sdk.ErrPluginShutdown too, so callers of an executor need check only that.
	ErrClosed error = closedError{}
	// ErrNotExecutable means a plugin's file cannot be executed.
	ErrNotExecutable = errors.New("not executable")
	// ErrUntrusted means a plugin's file, or its folder, is owned or
	// writable by another user, who could run code as the gateway through
	// it: Discover leaves it out.
	ErrUntrusted = errors.New("not run: another user could change this plugin")
	// ErrHandshake means the program started but is not an executor plugin
	// this gateway can speak to: it printed something other than go-plugin's
	// handshake, exited before it, or speaks another protocol version.
	ErrHandshake = errors.New("executor plugin handshake failed")
	// ErrStartTimeout means the plugin did not complete its handshake and
	// Info in time.
	ErrStartTimeout = errors.New("executor plugin did not start in time")
	// ErrInvalidInfo means the plugin answered Info with something the
	// gateway cannot use, such as no kinds (see sdk.Info.Validate).
	ErrInvalidInfo = errors.New("executor plugin answered an invalid Info")
	// ErrGaveUp means the host stopped launching a plugin file that
	// cannot start: one that speaks another protocol, is not a plugin, or
	// answered an invalid Info, at the first try; one that failed to start
	// three times in a row without ever completing the handshake and Info,
	// at the third. It runs the file again once the file changes (its size
	// or modification time), or after Manager.ForgetFailures. A running
	// plugin's supervisor looks for a change every second; a plugin that
	// never started is run again at the caller's next Start (the gateway
	// retries a failed source with a backoff of up to 30 s, and a reload,
	// SIGHUP, calls ForgetFailures), which the message says.
	ErrGaveUp = errors.New("gave up on this plugin file: it is not run again until it changes " +
		"(a change is picked up at the next retry, up to 30 s later) or the gateway reloads its configuration (SIGHUP)")
	// ErrLoadTimeout means a plugin did not answer a Load within the time
	// the caller gave it (Plugin.LoadWithin); its process was restarted.
	ErrLoadTimeout = errors.New("executor plugin did not answer Load in time")
	// ErrDuplicate means a manager already runs an executor of that name.
	ErrDuplicate = errors.New("executor already started")
	// ErrInvalidName means an executor name is empty or has characters other
	// than letters, digits, '-' and '_'.
	ErrInvalidName = errors.New("invalid executor name")
)

type closedError struct{}

func (closedError) Error() string { return "executor plugin closed" }
func (closedError) Unwrap() error { return sdk.ErrPluginShutdown }
