package host

import "syscall"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// adoptOrphans makes this process a child subreaper: a process below it
// whose parent dies is re-parented to it instead of to init, so that
// killLeftovers still finds it, even in a session of its own. ServeBuiltin
// turns this on only for its shutdown: orphans that exit become this
// process's zombies, and while it runs nothing reaps them (a reaper would
// race os/exec for the children it waits for).
func adoptOrphans() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}
