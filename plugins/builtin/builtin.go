// Package builtin lists the executors compiled into the skillgate binary.
// The gateway runs each out of process by re-executing its own binary as
// `skillgate plugin serve <name>`, or in process when configured so; both
// get their executor from here.
package builtin

import (
	"slices"

	"github.com/skillgate/skillgate/plugins/mcp"
	"github.com/skillgate/skillgate/plugins/sdk"
)

var registry = map[string]func() sdk.Executor{
	"mcp": func() sdk.Executor { return mcp.New() },
}

// New returns a fresh instance of the named built-in executor.
func New(name string) (sdk.Executor, bool) {
	f, ok := registry[name]
	if !ok {
		return nil, false
	}
	return f(), true
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
