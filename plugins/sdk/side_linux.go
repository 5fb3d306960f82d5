package sdk

import (
	"crypto/rand"
	"encoding/hex"
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
