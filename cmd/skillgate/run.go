package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/internal/nested"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func newRunCmd() *cobra.Command {
	var stdio bool
	var listen, profile string
	cmd := &cobra.Command{
		Use: "run",
		Example: `  skillgate run
  skillgate run -c skillgate.yaml --listen 127.0.0.1:9000
  skillgate run --stdio -c /path/to/skillgate.yaml`,
		Short: "Run the gateway (HTTP on 127.0.0.1:8811 by default, or stdio)",
		Long: fmt.Sprintf(`Run the gateway until interrupted.

Over HTTP the MCP endpoint is /mcp, each profile's is /mcp/p/<name>;
/healthz answers as soon as the process listens, /readyz lists every
server's state (and says "starting" until each had its first try;
/readyz?min=serving answers 200 once clients are served, even with a
failed server) and /stats what each endpoint's tool list costs.

On SIGTERM or Ctrl-C, /readyz answers 503 ("draining") while new
requests are still served for limits.shutdown_delay (0 by default; 5s
behind Kubernetes); then requests in flight get limits.drain_timeout, and
those still running are answered with an error that asks to send them
again. A second signal stops at once. A client that comes while the
servers start waits for them, limits.start_wait (8 s) at most. With --stdio the gateway serves
one client on stdin/stdout (the default endpoint, or --profile's) and logs
to stderr only; on a signal its requests in flight get limits.drain_timeout
the same way (new ones are answered with that error at once), while the
end of stdin, which is how a client leaves, cancels them at once.

The config is reloaded on SIGHUP and when the file changes: servers whose
settings did not change keep running; the plugins dirs are read again, and
plugins whose files did not change keep running.

Environment:
  SKILLGATE_EXECUTOR_PROTOCOL  newest executor protocol offered to executor
                               plugins (1 to %d; default the newest). 2 keeps
                               calls on the gRPC stream instead of the side
                               channel of 3 (docs/EXECUTORS.md).`, sdk.ProtocolVersion),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A client that goes away closes the pipes of stdout and
			// stderr: unless SIGPIPE is handled, Go ends the process on
			// the first write to them, skipping the shutdown. Handled,
			// the write fails (EPIPE) and the gateway stops as on stdin
			// EOF. (A handled signal, unlike an ignored one, is reset for
			// the servers the gateway starts.)
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			// load reads the config with the flags applied, at start and
			// on every reload.
			load := func() (*config.Config, error) {
				cfg, err := loadConfig(cmd)
				if err == nil && listen != "" {
					cfg.SetListen(listen, "--listen")
				}
				return cfg, err
			}
			cfg, err := load()
			if err != nil {
				return err
			}
			if err := nested.Enter(cfg.Source); err != nil {
				return err
			}
			if profile != "" && !stdio {
				return fmt.Errorf("--profile is for --stdio; over HTTP every profile has its endpoint, /mcp/p/%s", profile)
			}
			proto, err := executorProtocol()
			if err != nil {
				return err
			}
			log := newLogger(cmd, os.Stderr)
			b := readBuild()
			log.Info("starting", "version", version, "commit", short(b.commit), "pid", os.Getpid(), "config", absSource(cfg.Source))
			for _, n := range cfg.Notes {
				log.Warn(n.Error())
			}
			gw, err := gateway.New(gateway.Options{Config: cfg, Logger: log, Version: version, StdioProfile: profile, ExecutorProtocol: proto})
			if err != nil {
				return err
			}
			ctx, stop := namedStop(cmd.Context())
			defer stop()
			path, _ := cmd.Flags().GetString("config")
			if path != "" {
				path = cfg.Source // as loaded: a leading ~ expanded
			}
			go watchConfig(ctx, path, load, gw, log)
			if stdio {
				// A signal with the client still there drains its requests
				// as over HTTP (limits.drain_timeout); a second one cuts
				// them at once. (stdin's end cuts them: the client went.)
				now := make(chan struct{})
				defer stopNowOnSecondSignal(ctx, func() { gw.StopNow(); close(now) }, log)()
				drain := frontend.StdioDrain{Timeout: time.Duration(cfg.Limits.DrainTimeout), Now: now}
				err := gw.ServeStdio(frontend.WithStdioDrain(ctx, drain), os.Stdin, os.Stdout)
				if errors.Is(err, frontend.ErrStdoutClosed) {
					return nil // the client went: as when it closes stdin
				}
				return err
			}
			defer stopNowOnSecondSignal(ctx, gw.StopNow, log)()
			return gw.Run(ctx)
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve one client over stdin/stdout instead of HTTP")
	cmd.Flags().StringVar(&profile, "profile", "", "with --stdio, serve this profile's tool set instead of the default endpoint's")
	cmd.Flags().StringVar(&listen, "listen", "", "HTTP address, overriding listen.http (keep it on 127.0.0.1 unless you set auth.tokens)")
	return cmd
}

// namedStop returns a context that ends with ctx, whose cause, when a
// signal stopped the command, is the signal's name ("SIGTERM"): the
// gateway logs its cause as the reason it stops (stopping reason=SIGTERM).
func namedStop(ctx context.Context) (context.Context, context.CancelFunc) {
	named, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		var i interrupted
		if errors.As(cause, &i) {
			cause = errors.New(signalName(i.sig))
		}
		cancel(cause)
	})
	return named, func() { stop(); cancel(nil) }
}

// stopNowOnSecondSignal makes a second SIGTERM or Ctrl-C end the waits
// of the stop the first began (main.go): stopNow (once) makes the gateway
// answer the requests still running with an error and exit without
// waiting out limits.shutdown_delay and limits.drain_timeout. ctx is the
// one the first signal ends. The returned func stops listening.
func stopNowOnSecondSignal(ctx context.Context, stopNow func(), log interface{ Info(string, ...any) }) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	seen := 0
	if ctx.Err() != nil {
		seen = 1 // the first came before sigs listened
	}
	go func() {
		for {
			select {
			case sig := <-sigs:
				if seen++; seen == 2 {
					name := sig.String()
					if s, ok := sig.(syscall.Signal); ok {
						name = signalName(s)
					}
					log.Info("second signal: stopping at once", "signal", name)
					stopNow()
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

// signalName is a stopping signal's name as a person knows it.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// watchConfig reloads the config (load) on SIGHUP and when the file at
// path changes (its modification time or size). A config that fails to
// load is reported and the running one kept. Without a file (the built-in
// default) SIGHUP is only logged: it must not end the gateway, as it would
// unhandled.
func watchConfig(ctx context.Context, path string, load func() (*config.Config, error), gw *gateway.Gateway, log interface {
	Info(string, ...any)
	Error(string, ...any)
}) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if path == "" {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: nothing to reload; the gateway runs on the built-in default (start it with -c FILE to reload a config)")
			}
		}
	}
	stamp := func() (time.Time, int64) {
		fi, err := os.Stat(path)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	mt, sz := stamp()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-tick.C:
			m, s := stamp()
			if m.Equal(mt) && s == sz {
				continue
			}
			mt, sz = m, s
		}
		cfg, err := load()
		if err != nil {
			log.Error("config not reloaded; keeping the running one", "err", err)
			gw.ReloadFailed(err)
			continue
		}
		if err := gw.Reload(ctx, cfg); err != nil {
			log.Error("reload failed", "err", err)
		}
	}
}

// executorProtocol reads SKILLGATE_EXECUTOR_PROTOCOL: the newest executor
// protocol to offer plugins, or 0 (unset) for every version.
func executorProtocol() (int, error) {
	v := os.Getenv("SKILLGATE_EXECUTOR_PROTOCOL")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < sdk.MinProtocolVersion || n > sdk.ProtocolVersion {
		return 0, fmt.Errorf("SKILLGATE_EXECUTOR_PROTOCOL=%q: want an executor protocol version from %d to %d, or unset it",
			v, sdk.MinProtocolVersion, sdk.ProtocolVersion)
	}
	return n, nil
}

// absSource is a config's source as an absolute path, for the log of a
// process whose working folder the reader does not know; a source that is
// not a file (the built-in default, stdin) as it is.
func absSource(src string) string {
	if src == "" || strings.HasPrefix(src, "<") {
		return src
	}
	if abs, err := filepath.Abs(src); err == nil {
		return abs
	}
	return src
}
