package script

import (
	"errors"
	"os/exec"
)

// sandboxAvailable reports why sandbox.enabled cannot be honoured here.
func sandboxAvailable() error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return errors.New("sandbox.enabled needs bubblewrap (bwrap), which is not installed: apt-get install bubblewrap, or turn the sandbox off")
	}
	return nil
}

// ulimitsAvailable reports why ulimits cannot be applied here.
func ulimitsAvailable() error {
	if _, err := exec.LookPath("prlimit"); err != nil {
		return errors.New("ulimits need prlimit (util-linux), which is not installed")
	}
	return nil
}
