package builtin

import (
	"os"
	"runtime"
	"runtime/debug"
)

// TuneProcess sets the Go runtime up for a process that serves the named
// built-in executor, before it serves. The mcp executor only relays bytes
// between the gateway and its upstreams: one P spares it the scheduler's
// cross-CPU hand-offs (idle Ps spinning, futex wake-ups) that cost more
// than they buy on the small machines a gateway shares with its upstreams.
// Its heap is small (a few MiB live: definitions and buffers), so
// collecting at 50% growth instead of 100% keeps ~3 MiB off its peak RSS
// for about a microsecond of GC per call (measured with the harness: the
// executor's CPU per proxied call did not move beyond the noise).
// GOMAXPROCS and GOGC in the executor's environment win over this.
func TuneProcess(name string) {
	if name == "mcp" && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if name == "mcp" && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}
