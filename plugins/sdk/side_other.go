//go:build !linux

package sdk

// sideAddress offers no side channel off Linux: a socket file could be
// left behind by a killed executor, and the Calls stream works everywhere.
func sideAddress() (string, error) { return "", nil }
