package wasm

import (
	"errors"
	"fmt"
)

// The executor reports load and call failures with the SDK's sentinel errors
// (sdk.ErrInvalidSpec, sdk.ErrUnknownSource, sdk.ErrUnsupported,
// sdk.ErrUnavailable). A guest that fails, runs out of time or memory is not
// an error of Call: it is a tool result with isError set and a status (see
// the Status constants). These errors are the build functions'.
var (
	// ErrToolchain means the toolchain a build needs is not installed: no
	// go or cargo on PATH, or Rust without the wasm32-wasip1 target.
	ErrToolchain = errors.New("toolchain not available")
	// ErrBuild means the compiler ran and failed; the *BuildError that wraps
	// it carries the compiler's output.
	ErrBuild = errors.New("build failed")
)

// BuildError is a failed build: which compiler, where, and what it printed.
type BuildError struct {
	// Lang is "go" or "rust".
	Lang string
	// Dir is the source folder.
	Dir string
	// Output is the compiler's combined stdout and stderr (its tail when long).
	Output string
	// Err is the cause: ErrBuild (the compiler failed), a timeout, or an
	// exec error.
	Err error
}

// Error implements error.
func (e *BuildError) Error() string {
	msg := fmt.Sprintf("build %s in %s: %v", e.Lang, e.Dir, e.Err)
	if e.Output != "" {
		msg += "\n" + e.Output
	}
	return msg
}

// Unwrap returns the cause.
func (e *BuildError) Unwrap() error { return e.Err }
