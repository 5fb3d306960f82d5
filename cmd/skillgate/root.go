package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/suggest"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "skillgate",
		Short: "One MCP endpoint in front of your MCP servers, tools, pipelines and skills",
		Long: `skillgate federates stdio and remote MCP servers behind one endpoint, with
namespaced tools (<server>__<tool>), supervised upstream processes and
executor plugins; serves script and WebAssembly tools from folders, YAML
pipelines and SKILL.md skills; starts the Docker services they need; and lets
clients discover tools progressively (find_tools, activate) instead of
listing them all.

Start it on the built-in default (no config needed):
  skillgate run

Serve your own servers, then point any MCP client at http://127.0.0.1:8811/mcp:
  skillgate import ~/.config/Claude/claude_desktop_config.json > skillgate.yaml
  skillgate run -c skillgate.yaml

Or let a desktop client launch it over stdio:
  skillgate run --stdio -c /path/to/skillgate.yaml

Start small: list only the meta-tools and what a session activates:
  skillgate run --disclosure progressive`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if lv, _ := cmd.Flags().GetString("log-level"); lv != "" {
				var level slog.Level
				if err := level.UnmarshalText([]byte(lv)); err != nil {
					return fmt.Errorf("--log-level %q: use debug, info, warn or error", lv)
				}
			}
			if f, _ := cmd.Flags().GetString("log-format"); f != "text" && f != "json" {
				return fmt.Errorf("--log-format %q (or $SKILLGATE_LOG_FORMAT): use text or json", f)
			}
			if mode, _ := cmd.Flags().GetString("disclosure"); mode != "" && mode != "all" && mode != "progressive" {
				return fmt.Errorf("--disclosure %q: use all or progressive", mode)
			}
			return nil
		},
	}
	root.PersistentFlags().StringP("config", "c", "", "config file (default: the built-in default config)")
	root.PersistentFlags().String("disclosure", "", "override the config's disclosure mode for the default endpoint: all or progressive")
	root.PersistentFlags().String("log-level", "", "log level: debug, info, warn, error (default info for run, warn otherwise)")
	root.PersistentFlags().String("log-format", envOr("SKILLGATE_LOG_FORMAT", "text"),
		"log records on stderr as text (key=value) or json (one object a line, for log shippers)")
	root.AddCommand(
		newRunCmd(), newValidateCmd(), newImportCmd(), newToolsCmd(), newCallCmd(),
		newServersCmd(), newProfilesCmd(), newVersionCmd(), newPluginCmd(), newServicesCmd(),
		newPipelineCmd(), newSkillsCmd(),
	)
	// Cobra adds its completion command as Execute starts; added now, it
	// is a group like the others. Its scripts go to the process's stdout
	// (the command's output as it is now), whatever SetOut says later.
	root.InitDefaultCompletionCmd()
	root.SetHelpCommand(newHelpCmd())
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes each command group (a command that only
// holds subcommands) fail on an unknown subcommand, as the root does,
// instead of printing its help and exiting 0 as cobra leaves it.
// newHelpCmd is `skillgate help [COMMAND...]`: cobra's help, except that a
// topic it does not know is an error (exit 1, with did-you-mean), not the
// root's usage and exit 0, so that a script sees the mistake.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the help of any command: skillgate help tools list",
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil || cmd == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() || sub.Name() == "help" {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err == nil && len(rest) > 0 {
				err = fmt.Errorf("%q is not a command of %s", rest[0], cmd.CommandPath())
			}
			if err != nil || cmd == nil {
				parent := c.Root()
				if len(args) > 1 {
					if p, _, perr := c.Root().Find(args[:len(args)-1]); perr == nil && p != nil {
						parent = p
					}
				}
				var names []string
				for _, sub := range parent.Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
				topic := args[len(args)-1]
				return fmt.Errorf("unknown help topic %q; %s (see %s --help)", strings.Join(args, " "),
					suggest.Hint(topic, names, "the commands"), parent.CommandPath())
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c == c.Root() || !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		what := "command"
		if cmd.Name() == "completion" && cmd.Parent() == cmd.Root() {
			what = "shell"
		}
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return fmt.Errorf("unknown %s %q for %q; %s (see %s --help)", what, args[0], cmd.CommandPath(),
			suggest.Hint(args[0], names, "the "+what+"s"), cmd.CommandPath())
	}
}

// loadConfig reads --config, or returns the built-in default, with the
// root flags that override it (--disclosure) applied. A reload calls it
// again, so an override outlives reloads.
func loadConfig(cmd *cobra.Command) (*config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg := config.BuiltinDefault()
	if path != "" {
		var err error
		load := config.LoadForRun
		if stdio, _ := cmd.Flags().GetBool("stdio"); stdio {
			load = config.LoadForStdio // no HTTP front end: its settings may be unset
		}
		if cfg, err = load(path); err != nil {
			return nil, err
		}
	}
	if mode, _ := cmd.Flags().GetString("disclosure"); mode != "" {
		cfg.Disclosure = mode // checked in PersistentPreRunE
	}
	return cfg, nil
}

// newLogger logs to stderr: stdout is for data (and for the protocol under --stdio).
// A one-shot command's log ends when a signal interrupts it, unless
// --log-level asks for the log: what stops then fails because it was
// stopped, and the command says it was interrupted.
func newLogger(cmd *cobra.Command, w io.Writer) *slog.Logger {
	lv, _ := cmd.Flags().GetString("log-level")
	serving := cmd.Name() == "run" && cmd.Parent() == cmd.Root() // not `pipeline run`
	level := slog.LevelWarn
	switch {
	case lv != "":
		_ = level.UnmarshalText([]byte(lv)) // checked in PersistentPreRunE
	case serving:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	h := slog.Handler(slog.NewTextHandler(w, opts))
	if f, _ := cmd.Flags().GetString("log-format"); f == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	if lv == "" && !serving && cmd.Context() != nil {
		h = untilDone(h, cmd.Context().Done())
	}
	return slog.New(h)
}

// silentLogger is the logger of a command whose output reports everything
// the gateway's log would tell (the state and last error of each server):
// none, unless --log-level asks for it.
func silentLogger(cmd *cobra.Command) *slog.Logger {
	if lv, _ := cmd.Flags().GetString("log-level"); lv != "" {
		return newLogger(cmd, cmd.ErrOrStderr())
	}
	return slog.New(slog.DiscardHandler)
}

// dropRecords leaves out the log records whose message drop says to.
type dropRecords struct {
	slog.Handler
	drop func(msg string) bool
}

func (h dropRecords) Handle(ctx context.Context, r slog.Record) error {
	if h.drop(r.Message) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h dropRecords) WithAttrs(attrs []slog.Attr) slog.Handler {
	return dropRecords{h.Handler.WithAttrs(attrs), h.drop}
}

func (h dropRecords) WithGroup(name string) slog.Handler {
	return dropRecords{h.Handler.WithGroup(name), h.drop}
}

// untilDone leaves out the log records that come once done is closed.
func untilDone(h slog.Handler, done <-chan struct{}) slog.Handler {
	return dropRecords{h, func(string) bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}}
}

// withoutRecords leaves out the log records whose message is in drop:
// the gateway's records that repeat what a command reports itself.
func withoutRecords(h slog.Handler, drop map[string]bool) slog.Handler {
	return dropRecords{h, func(msg string) bool { return drop[msg] }}
}

// serverFailures are the messages of the gateway's records of a server
// failing to start or load, each of which repeats the LastError of its
// status, and those of the plugin host's and the gateway's records of a
// plugin failing, refused or restarted, which that LastError or the error
// of a call tells as well.
var serverFailures = map[string]bool{
	"source failed": true, "source failed to load": true, "server not started": true, "tool folder invalid": true, "wasm tool build failed": true,
	"plugin not served": true, "executor went down": true, "executor restarting": true,
	"executor did not answer Load in time; restarting it":                                                  true,
	"executor given up on: it is not started again until its file changes or the gateway reloads (SIGHUP)": true,
}

// nameCollisions are the messages of the gateway's records of name
// collisions, which a running gateway logs for its operator. A one-shot
// command would print them on every run, for a config that did not
// change; tools list prints the collisions itself.
var nameCollisions = map[string]bool{"name collision": true, "name collision resolved": true}

// pipelineProblems are the messages of the gateway's records that sum up
// the problems and warnings of its pipelines, which `pipeline validate`
// prints in full.
var pipelineProblems = map[string]bool{
	"pipelines with problems are not served": true, "skill pipelines with problems are not served": true,
	"pipelines are served with warnings": true,
}

// envOr returns the value of the environment variable name, or def when
// it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "version",
		Example: `  skillgate version
  skillgate version --json`,
		Short: "Print the version, the commit it was built from and the executor protocols",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := struct {
				Version     string `json:"version"`
				Commit      string `json:"commit,omitempty"`
				Modified    bool   `json:"modified,omitempty"`
				Built       string `json:"commit_time,omitempty"`
				Go          string `json:"go"`
				ProtocolMin int    `json:"executor_protocol_min"`
				ProtocolMax int    `json:"executor_protocol_max"`
			}{Version: version, Go: runtime.Version(), ProtocolMin: sdk.MinProtocolVersion, ProtocolMax: sdk.ProtocolVersion}
			b := readBuild()
			v.Commit, v.Modified, v.Built = b.commit, b.modified, b.time
			if asJSON {
				return printJSON(cmd.OutOrStdout(), v)
			}
			commit := short(v.Commit)
			if v.Modified {
				commit += ", modified"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "skillgate %s (%s, %s, executor protocols %d-%d)\n", v.Version, commit, v.Go, v.ProtocolMin, v.ProtocolMax)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
