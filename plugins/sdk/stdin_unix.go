//go:build unix

package sdk

import (
	"os"
	"syscall"
)

// pollableStdin returns stdin read through the runtime's network poller. A
// plain blocking read of os.Stdin parks an OS thread in the read system
// call while holding its P until sysmon takes the P back, which can take
// up to 10 ms on an idle process: with GOMAXPROCS=1 the whole plugin would
// stall that long, at start-up among other times.
func pollableStdin() *os.File {
	if err := syscall.SetNonblock(int(os.Stdin.Fd()), true); err != nil {
		return os.Stdin
	}
	// NewFile sees the non-blocking descriptor and registers it with the poller.
	return os.NewFile(os.Stdin.Fd(), "/dev/stdin")
}
