package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// The shutdown tests run the test binary as a plugin (see TestMain).
const (
	envShutdownMode = "SDK_TEST_SHUTDOWN_MODE" // "shutdowner", "hang" (Shutdown ignores ctx), "talker" (Shutdown writes and logs) or "plain" (no Shutdowner)
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

// talker is an executor whose Shutdown writes to stdout and stderr and
// logs through the Host, as an author's would.
type talker struct {
	blocker
	host Host
}

func (t *talker) SetHost(h Host) { t.host = h }

func (t *talker) Shutdown(ctx context.Context) error {
	fmt.Fprintln(os.Stderr, "talker: stderr as Shutdown begins")
	fmt.Fprintln(os.Stdout, "talker: stdout during Shutdown")
	if t.host == nil {
		fmt.Fprintln(os.Stderr, "talker: no host")
	} else if err := t.host.Log(ctx, "warn", "talker: host log during Shutdown", map[string]string{"k": "v"}); err != nil {
		fmt.Fprintln(os.Stderr, "talker: host log failed:", err)
	}
	fmt.Fprintln(os.Stderr, "talker: stderr as Shutdown ends")
	return nil
}

var (
	_ Shutdowner = (*talker)(nil)
	_ HostUser   = (*talker)(nil)
)

// servePlugin is the plugin side of the shutdown tests.
func servePlugin(mode string) {
	switch mode {
	case "plain":
		Serve(blocker{})
	case "talker":
		Serve(&talker{})
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
