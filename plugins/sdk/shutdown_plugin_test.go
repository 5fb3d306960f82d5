package sdk

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"
)

// The shutdown tests run the test binary as a plugin (see TestMain).
const (
	envShutdownMode = "SDK_TEST_SHUTDOWN_MODE" // "shutdowner", "hang" (Shutdown ignores ctx) or "plain" (no Shutdowner)
	envShutdownFile = "SDK_TEST_SHUTDOWN_FILE" // where Shutdown writes the time its context leaves it
)

// stopper is an executor with a shutdown hook.
type stopper struct {
	blocker
	hang bool
}

func (s stopper) Shutdown(ctx context.Context) error {
	dl, ok := ctx.Deadline()
	left := "none"
	if ok {
		left = strconv.FormatInt(int64(time.Until(dl)), 10)
	}
	if err := os.WriteFile(os.Getenv(envShutdownFile), []byte(left), 0o644); err != nil {
		return err
	}
	if s.hang {
		select {}
	}
	return errors.New("a failure Serve logs")
}

var _ Shutdowner = stopper{}

// servePlugin is the plugin side of the shutdown tests.
func servePlugin(mode string) {
	switch mode {
	case "plain":
		Serve(blocker{})
	default:
		Serve(stopper{hang: mode == "hang"})
	}
	// Serve returned: the gateway stopped the plugin.
	if f := os.Getenv(envShutdownFile); f != "" {
		if _, err := os.Stat(f); err == nil {
			_ = os.WriteFile(f+".returned", nil, 0o644)
		}
	}
}
