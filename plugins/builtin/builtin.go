// Package builtin lists the executors compiled into the skillgate binary.
// The gateway runs each out of process by re-executing its own binary as
// `skillgate plugin serve <name>`, or in process when configured so; both
// get their executor from here.
package builtin

import (
	"log/slog"
	"os"
	"slices"

	"github.com/skillgate/skillgate/plugins/mcp"
	"github.com/skillgate/skillgate/plugins/script"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/wasm"
)

var registry = map[string]func(log *slog.Logger) sdk.Executor{
	"mcp":    func(log *slog.Logger) sdk.Executor { return mcp.New(mcp.WithLogger(log)) },
	"script": func(log *slog.Logger) sdk.Executor { return script.New(script.WithLogger(log)) },
	"wasm":   func(log *slog.Logger) sdk.Executor { return wasm.New(wasm.WithLogger(log)) },
}

// New returns a fresh instance of the named built-in executor, logging to
// log: the gateway's own logger in process, JSON on stderr (which the plugin
// host reads) out of process.
func New(name string, log *slog.Logger) (sdk.Executor, bool) {
	f, ok := registry[name]
	if !ok {
		return nil, false
	}
	return f(log), true
}

// PluginLogger is the logger of a built-in executor served as a plugin:
// JSON lines on stderr, which the gateway's plugin host parses.
func PluginLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// Has reports whether name is a built-in executor.
func Has(name string) bool {
	_, ok := registry[name]
	return ok
}

// Names lists the built-in executors, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
