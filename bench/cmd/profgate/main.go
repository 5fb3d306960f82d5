// Command profgate is skillgate's `run` and `plugin serve` with a pprof
// endpoint, for skillbench -profile. It wires the gateway the way
// cmd/skillgate does (gateway.New + Run; builtin.New + sdk.Serve) and
// serves net/http/pprof on a free loopback port, written to
// pprof-<role>-<pid>.addr next to the binary (plugins get a clean
// environment, so the address cannot travel in a variable).
//
//	profgate run -c skillgate.yaml --listen 127.0.0.1:8811
//	profgate plugin serve mcp        # what the gateway re-executes
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // the point of this program
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "profgate:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 3 && args[0] == "plugin" && args[1] == "serve" {
		if err := servePprof("executor-" + args[2]); err != nil {
			return err
		}
		ex, ok := builtin.New(args[2], builtin.PluginLogger())
		if !ok {
			return fmt.Errorf("no built-in executor %q", args[2])
		}
		if c, ok := ex.(io.Closer); ok {
			defer c.Close()
		}
		sdk.Serve(ex)
		return nil
	}
	if len(args) == 0 || args[0] != "run" {
		return errors.New("usage: profgate run -c FILE --listen ADDR | profgate plugin serve NAME")
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	path := fs.String("c", "", "config file")
	listen := fs.String("listen", "", "HTTP address")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen.HTTP = *listen
	}
	if err := servePprof("gateway"); err != nil {
		return err
	}
	// Same logger as `skillgate run` at its default level.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: log, Version: "profgate"})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return gw.Run(ctx)
}

func servePprof(role string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	name := filepath.Join(filepath.Dir(exe), fmt.Sprintf("pprof-%s-%d.addr", role, os.Getpid()))
	if err := os.WriteFile(name, []byte(ln.Addr().String()), 0o644); err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, nil) }()
	return nil
}
