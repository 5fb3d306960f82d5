//go:build !linux

package services

// processIdentity tells nothing on this platform: a process of another
// skillgate is never provably gone, so its containers are left to its own
// shutdown or to `skillgate services down`.
func processIdentity(int) (start, boot, machine, pidns string) { return "", "", "", "" }
