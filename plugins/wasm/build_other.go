//go:build !unix

package wasm

import "os/exec"

// ownGroup leaves cmd as it is: without process groups, cancel kills the
// compiler alone.
func ownGroup(*exec.Cmd) {}
