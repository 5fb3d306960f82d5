//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// platformSupported refuses to run: skillbench reads the CPU time and
// memory of the processes it measures from /proc, which only Linux has,
// and a table without them would be wrong.
func platformSupported() error {
	return fmt.Errorf("skillbench reads CPU time and memory from /proc, which only Linux has, and this is %s: run it on Linux", runtime.GOOS)
}
