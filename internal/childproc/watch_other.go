//go:build unix && !linux

package childproc

// dog watches the process groups of the children Start started, since the
// kernel has no parent-death signal here (see runWatchdog).
var dog watchdog

// watch has the watchdog kill the process group pgid if this process dies
// before it called unwatch.
func watch(pgid int) { dog.add(pgid) }

// unwatch ends watch, once the group's leader was reaped.
func unwatch(pgid int) { dog.remove(pgid) }
