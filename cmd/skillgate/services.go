package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/services"
)

func newServicesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "services",
		Short: "Manage the Docker services of the config: ls, up, down, status, logs, rm, prune",
		Long: `Manage the Docker containers the config's services: section declares.
These commands talk to the Docker engine directly and see the same containers
as a running gateway (they find them by label), so they work with or without
one. Services started here keep running until 'down': a gateway stops on
shutdown only what it started itself (never keep: true services, and nothing
while another gateway of the config still runs).

  skillgate -c skillgate.yaml services up            start every service, wait until healthy
  skillgate -c skillgate.yaml services logs -f pg    follow a service's output
  skillgate -c skillgate.yaml services prune         remove skillgate's leftovers (labelled only)

They read only the services: section, service_dirs: and docker:, so they need
only the environment variables those use: a ${VAR} not set elsewhere (an auth
token, a server's env) is ignored. One not set in a service's definition stops
'up' of that service and is a warning for ls, status and logs.`,
	}
	cmd.AddCommand(
		servicesLsCmd(), servicesStatusCmd(), servicesUpCmd(), servicesDownCmd(),
		servicesLogsCmd(), servicesRmCmd(), servicesPruneCmd(),
	)
	return cmd
}

// servicesUse is what a services command does with the definitions.
type servicesUse int

const (
	useNames servicesUse = iota // down, rm, prune: finds containers by name and label
	useShow                     // ls, status, logs: shows the definitions
	useStart                    // up: starts the services named and their dependencies
)

// serviceManager builds the manager of --config's services for a command
// that uses them as use says, on the services named (all when none).
func serviceManager(cmd *cobra.Command, use servicesUse, names []string) (*services.Manager, error) {
	cfg, err := loadServicesConfig(cmd)
	if err != nil {
		return nil, err
	}
	if len(cfg.Services) == 0 {
		return nil, fmt.Errorf("%s declares no services; add a services: section (see docs/SERVICES.md)", cfg.Source)
	}
	return newDetachedManager(cmd, cfg, use, names)
}

// loadServicesConfig reads --config for the services commands: a ${VAR}
// not set outside what they read is ignored, and one in a service's
// definition is the service's Problem (config.ParseForServices).
func loadServicesConfig(cmd *cobra.Command) (*config.Config, error) {
	if path, _ := cmd.Flags().GetString("config"); path != "" {
		return config.LoadForServices(path)
	}
	return loadConfig(cmd)
}

// newDetachedManager builds cfg's manager, after refusing to start (use
// useStart) a service whose definition has a ${VAR} that is not set, or
// warning about one the command shows (useShow).
func newDetachedManager(cmd *cobra.Command, cfg *config.Config, use servicesUse, names []string) (*services.Manager, error) {
	var refused, problems []error
	start := servicesToStart(cfg, names)
	for _, name := range slices.Sorted(maps.Keys(cfg.Services)) {
		p := cfg.Services[name].Problem
		if p == nil {
			continue
		}
		problems = append(problems, fmt.Errorf("service %s: %w", name, p))
		switch {
		case use == useStart && start[name]:
			refused = append(refused, fmt.Errorf("cannot start service %s: %w", name, p))
		case use != useNames:
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: service %s: %v; `services up %s` needs it\n", name, p, name)
		}
	}
	if len(refused) > 0 {
		return nil, errors.Join(refused...)
	}
	// Detached: what `services up` starts runs until `services down`, not
	// only while this command does.
	m, err := gateway.NewServiceManager(cfg, gateway.ServiceOptions{Logger: newLogger(cmd, os.Stderr), Detach: true})
	if err != nil && len(problems) > 0 {
		// A field left empty by an unset variable (an image) may be why.
		return nil, errors.Join(append(problems, err)...)
	}
	return m, err
}

// servicesToStart returns the services `up` of names starts: those and
// their dependencies, or every service when names is empty.
func servicesToStart(cfg *config.Config, names []string) map[string]bool {
	if len(names) == 0 {
		names = slices.Collect(maps.Keys(cfg.Services))
	}
	out := map[string]bool{}
	for len(names) > 0 {
		name := names[len(names)-1]
		names = names[:len(names)-1]
		s, ok := cfg.Services[name]
		if !ok || out[name] {
			continue
		}
		out[name] = true
		for dep := range s.DependsOn {
			names = append(names, dep)
		}
	}
	return out
}

func servicesLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "ls",
		Example: `  skillgate services ls -c examples/services/skillgate.yaml
  skillgate services ls -c skillgate.yaml --json`,
		Short: "List the services with their state, policy and ports",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := serviceManager(cmd, useShow, nil)
			if err != nil {
				return err
			}
			st, err := m.Status(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), gateway.FormatServices(st))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func servicesStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "status [NAME...]",
		Example: `  skillgate services status -c examples/services/skillgate.yaml
  skillgate services status kv -c examples/services/skillgate.yaml --json`,
		Short: "Show services in detail: container, health and its last check, ports, the variables users get",
		RunE: func(cmd *cobra.Command, names []string) error {
			m, err := serviceManager(cmd, useShow, names)
			if err != nil {
				return err
			}
			st, err := m.Status(cmd.Context(), names...)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), gateway.FormatServiceDetails(st))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func servicesUpCmd() *cobra.Command {
	var build bool
	cmd := &cobra.Command{
		Use: "up [NAME...]",
		Example: `  skillgate services up -c examples/services/skillgate.yaml
  skillgate services up kv -c examples/services/skillgate.yaml`,
		Short: "Start services (all by default) with their dependencies and wait until healthy",
		Long: `Start services with their dependencies, whatever their policy, and wait
until they are healthy. Images are pulled, or built from build: contexts, when
missing (--build builds again). On a terminal, stderr shows a progress bar.`,
		RunE: func(cmd *cobra.Command, names []string) error {
			m, err := serviceManager(cmd, useStart, names)
			if err != nil {
				return err
			}
			bars := newProgressBars(os.Stderr)
			err = m.Up(cmd.Context(), bars.report, build, names...)
			bars.finish()
			if err != nil {
				return err
			}
			st, err := m.Status(cmd.Context(), names...)
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), gateway.FormatServices(st))
			return err
		},
	}
	cmd.Flags().BoolVar(&build, "build", false, "build images with a build context again")
	return cmd
}

func servicesDownCmd() *cobra.Command {
	return &cobra.Command{
		Use: "down [NAME...]",
		Example: `  skillgate services down -c examples/services/skillgate.yaml
  skillgate services down kv -c examples/services/skillgate.yaml`,
		Short: "Stop and remove services' containers (all by default); volumes are kept",
		RunE: func(cmd *cobra.Command, names []string) error {
			m, err := serviceManager(cmd, useNames, names)
			if err != nil {
				return err
			}
			if err := m.Down(cmd.Context(), names...); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "stopped %s; volumes kept\n", namesOrAll(m, names))
			return nil
		},
	}
}

func servicesLogsCmd() *cobra.Command {
	var follow bool
	var tail int
	cmd := &cobra.Command{
		Use: "logs NAME",
		Example: `  skillgate services logs kv -c examples/services/skillgate.yaml
  skillgate services logs kv -f -c examples/services/skillgate.yaml`,
		Short: "Print a service's output (-f to follow)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := serviceManager(cmd, useShow, args)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return m.Logs(ctx, args[0], services.LogOptions{Follow: follow, Tail: tail}, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the container stops or Ctrl-C")
	cmd.Flags().IntVar(&tail, "tail", 0, "only the last N lines (0: all)")
	return cmd
}

func servicesRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME...",
		Example: `  skillgate services rm kv -c examples/services/skillgate.yaml`,
		Short:   "Remove services' containers AND their named volumes (their data)",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			m, err := serviceManager(cmd, useNames, names)
			if err != nil {
				return err
			}
			if err := m.Remove(cmd.Context(), names...); err != nil {
				return err
			}
			their := "their"
			if len(names) == 1 {
				their = "its"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "removed %s and %s volumes\n", strings.Join(names, ", "), their)
			return nil
		},
	}
}

func servicesPruneCmd() *cobra.Command {
	var opts services.PruneOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "prune",
		Example: `  skillgate services prune -c examples/services/skillgate.yaml`,
		Short:   "Remove skillgate's leftovers: only objects carrying its labels",
		Long: `Remove what skillgate left behind, and only objects carrying its labels:
stopped containers, containers of services no longer declared, volumes of
services no longer declared that no container uses (--volumes: every unused
one of this project), and networks no container uses; with --images also
images skillgate built that a later build left untagged. Containers, volumes,
networks and images you made yourself are never touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadServicesConfig(cmd)
			if err != nil {
				return err
			}
			m, err := newDetachedManager(cmd, cfg, useNames, nil)
			if err != nil {
				return err
			}
			rep, err := m.Prune(cmd.Context(), opts)
			if asJSON {
				if jerr := writeJSON(cmd.OutOrStdout(), rep); jerr != nil {
					return jerr
				}
				return err
			}
			w := cmd.OutOrStdout()
			for _, x := range []struct {
				kind  string
				names []string
			}{{"container", rep.Containers}, {"volume", rep.Volumes}, {"network", rep.Networks}, {"image", rep.Images}} {
				for _, n := range x.names {
					fmt.Fprintf(w, "removed %s %s\n", x.kind, n)
				}
			}
			if err == nil && len(rep.Containers)+len(rep.Volumes)+len(rep.Networks)+len(rep.Images) == 0 {
				fmt.Fprintln(w, "nothing to prune")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&opts.Volumes, "volumes", false, "also remove unused volumes of services still declared (their data)")
	cmd.Flags().BoolVar(&opts.AllProjects, "all-projects", false, "prune every skillgate project on this engine, not only this config's")
	cmd.Flags().BoolVar(&opts.Images, "images", false, "also remove images skillgate built that a later build left untagged (any project's)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// namesOrAll names the services a command acted on.
func namesOrAll(m *services.Manager, names []string) string {
	if len(names) == 0 {
		names = m.Names()
	}
	return strings.Join(names, ", ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progressBars draws one bar per service and phase on a terminal, and
// nothing when w is not one (a pipe, a file, a client's stdio).
type progressBars struct {
	w    *os.File
	tty  bool
	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
}

func newProgressBars(w *os.File) *progressBars {
	return &progressBars{w: w, tty: isatty.IsTerminal(w.Fd()), bars: map[string]*progressbar.ProgressBar{}}
}

func (p *progressBars) report(ev services.Progress) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := ev.Service + " " + ev.Phase
	bar := p.bars[key]
	if bar == nil {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(key),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
		}
		if ev.Phase == "pull" {
			opts = append(opts, progressbar.OptionShowBytes(true))
		}
		bar = progressbar.NewOptions64(max(ev.Total, -1), opts...)
		p.bars[key] = bar
	}
	if ev.Total > 0 {
		bar.ChangeMax64(ev.Total)
	}
	_ = bar.Set64(ev.Current)
	if ev.Phase == "build" && ev.Message != "" {
		bar.Describe(key + ": " + oneline.Cut(strings.TrimSpace(ev.Message), 40))
	}
}

func (p *progressBars) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.bars {
		_ = b.Finish()
	}
}

// printRequires says, under `skillgate servers`, which services each server
// requires and what state they are in.
func printRequires(w io.Writer, st []gateway.SourceStatus) {
	for _, s := range st {
		if len(s.Services) == 0 {
			continue
		}
		parts := make([]string, 0, len(s.Services))
		for _, d := range s.Services {
			p := d.Name + " (" + d.State
			if d.LastError != "" {
				p += ": " + oneline.Cut(d.LastError, 100)
			}
			p += ")"
			if len(d.RequiredBy) > 0 {
				p += " for " + strings.Join(d.RequiredBy, ", ")
			}
			parts = append(parts, p)
		}
		fmt.Fprintf(w, "%s requires %s\n", s.Name, strings.Join(parts, ", "))
	}
}
