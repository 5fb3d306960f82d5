//go:build !linux

package script

import (
	"fmt"
	"runtime"
)

// sandboxAvailable refuses sandbox.enabled: the sandbox is bubblewrap,
// which needs Linux namespaces, and a tool that asked for it must not run
// without it.
func sandboxAvailable() error {
	return fmt.Errorf("sandbox.enabled needs bubblewrap (bwrap), which runs only on Linux, and this executor runs on %s: run skillgate on Linux, or turn the sandbox off", runtime.GOOS)
}

// ulimitsAvailable refuses ulimits: they are applied by prlimit(1), which
// only Linux has.
func ulimitsAvailable() error {
	return fmt.Errorf("ulimits need prlimit (util-linux), which exists only on Linux, and this executor runs on %s: run skillgate on Linux, or remove ulimits from the tool", runtime.GOOS)
}
