package childproc

// watch and unwatch do nothing on Linux: a child started by Start gets
// its parent-death signal (Pdeathsig) from the kernel.
func watch(int)   {}
func unwatch(int) {}
