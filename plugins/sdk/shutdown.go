package sdk

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// EnvKillWindow, set by the gateway, is its kill window as a Go duration
// ("10s"): how long an executor has, from the moment it is asked to stop,
// before the gateway SIGKILLs it and what it started. Serve bounds
// Shutdowner.Shutdown by it, or by 10 s when it is absent.
const EnvKillWindow = "SKILLGATE_KILL_WINDOW"

// defaultKillWindow stands in for a window the gateway did not announce
// (an older gateway, or a plugin started by hand).
const defaultKillWindow = 10 * time.Second

// shutdown calls an executor's Shutdown, once, however the process ends.
type shutdown struct {
	sd     Shutdowner
	window time.Duration
	log    hclog.Logger
	// restore points os.Stdout and os.Stderr back at the process's own,
	// before Shutdown runs (see Serve).
	restore func()
	once    sync.Once
}

// newShutdown returns nil when impl is not a Shutdowner.
func newShutdown(impl Executor, log hclog.Logger, restore func()) *shutdown {
	sd, ok := impl.(Shutdowner)
	if !ok {
		return nil
	}
	window, err := time.ParseDuration(os.Getenv(EnvKillWindow))
	if err != nil || window <= 0 {
		window = defaultKillWindow
	}
	return &shutdown{sd: sd, window: window, log: log, restore: restore}
}

// shutdownReserve is the part of a kill window kept back from Shutdown's
// deadline, for the process to exit (and an executor to kill what did
// not stop in time) before the gateway kills it.
func shutdownReserve(window time.Duration) time.Duration {
	return min(window/4, time.Second)
}

// handleSignals makes SIGTERM end the process through Shutdown, and a
// write to a stdout or stderr whose reader is gone (the gateway) fail
// instead of killing the process with SIGPIPE halfway through it.
func (s *shutdown) handleSignals() {
	if s == nil {
		return
	}
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		s.run(hclog.Info, "SIGTERM")
		os.Exit(0)
	}()
}

// run calls Shutdown, the first time only, and returns when it returned or
// the kill window passed; later calls wait for the first. It logs why at
// level. A nil s does nothing.
func (s *shutdown) run(level hclog.Level, why string) {
	if s == nil {
		return
	}
	s.once.Do(func() {
		start := time.Now()
		s.restore()
		s.log.Log(level, "executor stopping", "reason", why, "kill_window", s.window.String())
		ctx, cancel := context.WithDeadline(context.Background(), start.Add(s.window-shutdownReserve(s.window)))
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.sd.Shutdown(ctx) }()
		t := time.NewTimer(s.window)
		defer t.Stop()
		select {
		case err := <-done:
			if err != nil {
				s.log.Warn("executor shutdown failed", "error", err.Error())
			}
		case <-t.C:
			s.log.Warn("executor shutdown did not return within the kill window", "kill_window", s.window.String())
		}
	})
}
