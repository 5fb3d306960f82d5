package sdk

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"syscall"
)

// sideAddress names a Linux abstract socket: it has no file to leave
// behind when the executor is killed, and whoever connects must still
// present the offer's token.
func sideAddress() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "@skillgate-calls-" + hex.EncodeToString(b[:]), nil
}

// peerAllowed admits connections from processes of this process's user
// only (SO_PEERCRED); the token is still required.
func peerAllowed(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}
