package builtin

import (
	"os"
	"runtime"
)

// TuneProcess sets the Go runtime up for a process that serves the named
// built-in executor, before it serves. The mcp executor only relays bytes
// between gRPC and its upstreams: one P spares it the scheduler's
// cross-CPU hand-offs (idle Ps spinning, futex wake-ups) that cost more
// than they buy on the small machines a gateway shares with its upstreams.
// GOMAXPROCS in the executor's environment wins over this.
func TuneProcess(name string) {
	if name == "mcp" && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
