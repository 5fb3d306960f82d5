package main

import (
	"os"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestMain gives the commands the tests run a state folder of their own
// (XDG_STATE_HOME), so that none writes into the real home.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithOwnState(m))
}
