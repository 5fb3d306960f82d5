//go:build !linux

package host

import "errors"

// waitExitNoReap is only implemented on Linux; elsewhere the process is
// reaped first and its group killed right after.
func waitExitNoReap(int) error { return errors.ErrUnsupported }
