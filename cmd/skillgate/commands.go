package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func newValidateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "validate [FILE]",
		Example: `  skillgate validate skillgate.yaml
  skillgate validate -c skillgate.yaml --json
  generate-config | skillgate validate -     # - reads standard input`,
		Short: "Check a config file and report every problem with file:line",
		Long: `Check a config file (FILE, or the one -c names) as the gateway would load it:
strict keys, types, ${VAR} expansion against the current environment, names,
bundles, profiles, and every problem at once, each with file:line.

Files in plugins.dirs that would not be served (a name taken by a server
or by the gateway's own tools, a file that is not executable) are reported
as warnings, and so are folders of tools:, pipelines:, skills: and plugins:
that are not there. The skills and the pipelines it defines (pipelines.dirs
and pipelines.inline) are checked too, and their problems reported the same
way, also when the config has problems elsewhere. Tool names in pipelines
are not checked, since that needs the servers running: "skillgate pipeline
validate --all" checks them.

Problems and the summary go to stderr, and nothing to stdout. --json prints
{"ok", "errors", "warnings", "problems": [...], "plugins": [...]} on stdout
instead, and nothing on stderr: each problem with file, line, column,
field, message, severity (error or warning) and source (config, plugin,
tool, skill or pipeline), as "pipeline validate" and "skills validate"
print them; plugins are the executor plugins found in plugins.dirs that
the gateway would start (not run here), each with name and path.

Exit status: 0 when the file and its pipelines are valid, 1 otherwise.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, _ := cmd.Flags().GetString("config")
			if len(args) == 1 {
				if path != "" && path != args[0] {
					return fmt.Errorf("validate: two files given (%s and -c %s); name one", args[0], path)
				}
				path = args[0]
			}
			if path == "" {
				return errors.New("validate needs a file: skillgate validate skillgate.yaml")
			}
			r, err := validate(cmd.Context(), path, cmd.InOrStdin())
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), problemEnvelope(r.problems, map[string]any{"plugins": r.plugins})); err != nil {
					return err
				}
			} else {
				for _, l := range r.lines {
					fmt.Fprintln(cmd.ErrOrStderr(), l)
				}
			}
			if r.errors > 0 {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every problem as JSON on stdout")
	return cmd
}

func newImportCmd() *cobra.Command {
	var merge, project string
	var write, overwrite, skipExisting bool
	cmd := &cobra.Command{
		Use: "import FILE",
		Example: `  skillgate import ~/Library/Application\ Support/Claude/claude_desktop_config.json
  skillgate import .mcp.json --merge skillgate.yaml --write
  pbpaste | skillgate import -        # - reads standard input`,
		Short: "Convert a Claude Desktop, Claude Code, Cursor or VS Code MCP config to skillgate YAML",
		Long: `Read the MCP servers of an existing client config and print them as a
skillgate.yaml servers block, or merge them into an existing skillgate.yaml
(keeping its comments) with --merge.

A server named like the gateway's own tools (tools, admin, ...) or with a
name skillgate refuses is renamed (tools-server, my-server; -2, -3 ... when
that is taken), and the rename is told on stderr. An entry the config would
refuse for another reason stops the import with an error naming it: what
is printed or merged validates once its ${VAR}s are set.

A project's file (.mcp.json, .vscode/mcp.json, .cursor/mcp.json) runs its
stdio servers in the project folder: they get cwd: that folder, and
${workspaceFolder} becomes its path. Claude Code's ~/.claude.json gives its
projects' servers too (--project DIR: that project's only), each with
cwd: its folder, named PROJECT-added (db-app) when the name is taken.

With --merge, a server the file already has as it is stays as it is; one it
has with another definition merges nothing and fails, unless
--skip-existing keeps the file's or --overwrite replaces it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if merge == "" && (write || overwrite || skipExisting) {
				return errors.New("--write, --overwrite and --skip-existing work on the file --merge names: add --merge skillgate.yaml")
			}
			if overwrite && skipExisting {
				return errors.New("--overwrite replaces the servers the file has and --skip-existing keeps them: give one of them")
			}
			var in io.Reader = cmd.InOrStdin()
			name := "<stdin>"
			opts := config.ImportOptions{Project: project}
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in, name, opts.Path = f, args[0], args[0]
			}
			im, err := config.ImportWith(in, name, opts)
			if err != nil {
				return err
			}
			for _, w := range im.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			for _, n := range im.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			var out []byte
			added := len(im.Order)
			if merge == "" {
				out, err = config.MarshalServers(im.Servers, im.Order)
			} else {
				var cur []byte
				if cur, err = os.ReadFile(merge); err != nil {
					return err
				}
				mode := config.MergeFail
				switch {
				case overwrite:
					mode = config.MergeOverwrite
				case skipExisting:
					mode = config.MergeSkip
				}
				var res *config.MergeResult
				if res, err = config.MergeServers(cur, merge, im.Servers, im.Order, mode); err == nil {
					out, added = res.Out, len(res.Added)+len(res.Replaced)
					for _, s := range res.Same {
						fmt.Fprintf(cmd.ErrOrStderr(), "note: %s already has %s as imported; left as it is\n", merge, s)
					}
					for _, s := range res.Skipped {
						fmt.Fprintf(cmd.ErrOrStderr(), "note: %s has another %s; kept it (--skip-existing), the imported one is not merged\n", merge, s)
					}
					for _, s := range res.Replaced {
						fmt.Fprintf(cmd.ErrOrStderr(), "note: %s had another %s; replaced it (--overwrite)\n", merge, s)
					}
				}
			}
			if err != nil {
				return err
			}
			result := merge
			if result == "" {
				result = "the imported servers"
			}
			// The imported servers validate once their variables are set;
			// what is left is those variables, or the merged file's own.
			if err := im.Check(out, result, os.LookupEnv); err != nil {
				if onlyUnsetVariables(err) {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: set these variables where the gateway runs, or give them defaults:\n%v\n", err)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: the result does not validate yet; fix these before running it:\n%v\n", err)
				}
			}
			if write {
				if err := replaceFile(merge, out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "imported %d servers into %s\n", added, merge)
				return nil
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&merge, "merge", "", "merge into this skillgate.yaml instead of printing a servers block")
	cmd.Flags().BoolVar(&write, "write", false, "with --merge, write the file in place")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "with --merge, replace the servers the file has with another definition")
	cmd.Flags().BoolVar(&skipExisting, "skip-existing", false, "with --merge, keep the servers the file has with another definition, and merge the others")
	cmd.Flags().StringVar(&project, "project", "", "of Claude Code's ~/.claude.json, import the servers of this project folder only (with the user's)")
	return cmd
}

// onlyUnsetVariables reports whether every problem err joins is a ${VAR}
// that is not set.
func onlyUnsetVariables(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if !errors.Is(e, config.ErrUndefinedVariable) {
			return false
		}
	}
	return true
}

// replaceFile replaces the contents of the file at path (through a
// symlink, the file it points to) with data, atomically: a temporary file
// in the same folder, with the old file's permissions (a config may hold
// tokens), renamed over it.
func replaceFile(path string, data []byte) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	ok = true
	return nil
}

// startReporting starts a gateway on cfg for a one-shot command that tells of each
// server that is not ready itself (printNotReady, or the error of a call
// of its tool): unless --log-level asks for the log, the gateway's records
// of those failures are left out, so that each is told once.
func startReporting(cmd *cobra.Command, cfg *config.Config) (*gateway.Gateway, error) {
	return startConfig(cmd, cfg, quietLogger(cmd, serverFailures))
}

// startQuiet starts a gateway from --config for a one-shot command,
// logging without the gateway's records whose message is in drop, nor its
// name collision records (nameCollisions), unless --log-level asks for the
// whole log.
func startQuiet(cmd *cobra.Command, drop map[string]bool) (*gateway.Gateway, error) {
	return startGateway(cmd, quietLogger(cmd, drop))
}

// quietLogger is newLogger for a one-shot command: without the records
// whose message is in drop or in nameCollisions, unless --log-level asks
// for the whole log.
func quietLogger(cmd *cobra.Command, drop map[string]bool) *slog.Logger {
	log := newLogger(cmd, cmd.ErrOrStderr())
	if lv, _ := cmd.Flags().GetString("log-level"); lv == "" {
		all := maps.Clone(nameCollisions)
		maps.Copy(all, drop)
		log = slog.New(withoutRecords(log.Handler(), all))
	}
	return log
}

func startGateway(cmd *cobra.Command, log *slog.Logger) (*gateway.Gateway, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	return startConfig(cmd, cfg, log)
}

// startConfig starts a gateway on cfg for a one-shot command.
func startConfig(cmd *cobra.Command, cfg *config.Config, log *slog.Logger) (*gateway.Gateway, error) {
	proto, err := executorProtocol()
	if err != nil {
		return nil, err
	}
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: log, Version: version, ExecutorProtocol: proto})
	if err != nil {
		return nil, err
	}
	if err := gw.Start(cmd.Context()); err != nil {
		gw.Close()
		return nil, err
	}
	// Interrupted, Start returns with the servers it could not start
	// failed of it: that is no state to report.
	if err := cmd.Context().Err(); err != nil {
		gw.Close()
		return nil, err
	}
	return gw, nil
}

// startForCall starts a gateway on cfg for a call of tool and returns it
// as soon as it serves tool, or once every source had its first load (the
// tool is not there: calling it says why): a source that is slow to load
// holds back only the calls of its own tools. stop cancels what is still
// starting, waits for the start to return and closes the gateway.
func startForCall(cmd *cobra.Command, cfg *config.Config, log *slog.Logger, tool string) (gw *gateway.Gateway, stop func(), err error) {
	proto, err := executorProtocol()
	if err != nil {
		return nil, nil, err
	}
	gw, err = gateway.New(gateway.Options{Config: cfg, Logger: log, Version: version, ExecutorProtocol: proto})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	started := make(chan struct{})
	var startErr error
	go func() {
		defer close(started)
		startErr = gw.Start(ctx)
	}()
	stop = func() {
		cancel()
		<-started
		gw.Close()
	}
	gw.WaitTool(cmd.Context(), tool, started)
	// Interrupted, Start leaves the sources it could not load failed of
	// it: that is no state to report.
	if err := cmd.Context().Err(); err != nil {
		stop()
		return nil, nil, err
	}
	select {
	case <-started:
		if startErr != nil {
			stop()
			return nil, nil, startErr
		}
	default:
	}
	return gw, stop, nil
}

// startSilent starts a gateway from --config for a command whose output tells all the
// gateway's log would: none of the log, unless --log-level asks for it.
func startSilent(cmd *cobra.Command) (*gateway.Gateway, error) {
	return startGateway(cmd, silentLogger(cmd))
}

func newToolsCmd() *cobra.Command {
	tools := &cobra.Command{
		Use:   "tools",
		Short: "List the tool catalog and manage tool folders' versions",
		Long: `The tool catalog is every tool the config serves: its servers' tools
(<server>__<tool>), the script and WebAssembly tools of its tools.dirs, its
pipelines and skills, and the gateway's own (admin__, pipeline__ ...). "tools
list" starts the configured servers once and lists them, or asks a running
gateway with --url. A tool folder keeps a version on every update, delete
and rollback: "tools versions" lists them, "tools rollback" makes one live
again and "tools delete" removes the folder, keeping it as a version.`,
	}
	var asJSON, tokens bool
	var rem remote
	list := &cobra.Command{
		Use:   "list",
		Short: "List every tool the config serves, with its source and original name",
		Example: `  skillgate tools list
  skillgate tools list -c skillgate.yaml --json
  skillgate tools list --url http://127.0.0.1:8811 --tokens`,
		Long: `Start the configured servers, list the catalog and stop them again.
Names longer than 64 characters or with characters LLM APIs refuse are
shortened; the ORIGINAL column shows what the server calls the tool.
Collisions are listed after the tools.

With --url, list the tools of a running gateway instead (every tool the
endpoint can run, as its find_tools finds them): the gateway does not tell
the ORIGINAL name; --tokens reads its /stats.

--json prints {"tools": [...]}, each entry find_tools' (name, server, group
when the tool is in one, listed: whether tools/list shows it) with the
tool's whole description (find_tools gives its first sentence), and
original (the name the source gives it) when run from the config, which
also prints "conflicts" (kind, name, winner, loser, policy, resolution,
...) and "sources" (as servers --json). Servers that are not ready are
told of on stderr, after the list.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rem.url != "" {
				if tokens {
					stats, err := fetchStats(cmd.Context(), rem)
					if err != nil {
						return err
					}
					return printStats(cmd, stats, nil, asJSON)
				}
				return listRemoteTools(cmd, rem, asJSON)
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			gw, err := startReporting(cmd, cfg)
			if err != nil {
				return err
			}
			defer gw.Close()
			defer func() { printNotReady(cmd.ErrOrStderr(), gw.Status(), pluginPaths(cfg)) }() // after the list
			if tokens {
				return printStats(cmd, gw.Stats(), nil, asJSON)
			}
			snap := gw.Snapshot()
			if asJSON {
				cards, err := gw.ToolCards(cmd.Context())
				if err != nil {
					return err
				}
				tools := toolEntries(cards)
				for i := range tools {
					if it, ok := snap.Tool(tools[i].Name); ok {
						tools[i].Original = it.Original
						if d := strings.TrimSpace(it.Description); d != "" {
							tools[i].Description = d // whole: find_tools' is its first sentence
						}
					}
				}
				conflicts := append([]catalog.Conflict{}, snap.Conflicts()...)
				return printJSON(cmd.OutOrStdout(), struct {
					Tools     []toolEntry            `json:"tools"`
					Conflicts []catalog.Conflict     `json:"conflicts"`
					Sources   []gateway.SourceStatus `json:"sources"`
				}{tools, conflicts, gw.Status()})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tORIGINAL\tDESCRIPTION")
			for _, t := range snap.Tools() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Source, oneline.Clean(t.Original), oneline.Cut(t.Description, 60))
			}
			tw.Flush()
			for _, c := range snap.Conflicts() {
				if c.Own() {
					continue // the gateway's log said what to fix
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "conflict: %s %q: %s wins over %s (%s)\n", c.Kind, c.Name, c.Winner, c.Loser, c.Resolution)
			}
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().BoolVar(&tokens, "tokens", false, "print what tools/list costs a new client on each endpoint (bytes, estimated tokens) instead of the tools")
	rem.flags(list)
	tools.AddCommand(list)
	addToolStoreCmds(tools)
	return tools
}

// toolEntry is one tool as `tools list --json` prints it, from the config
// and from a running gateway alike: find_tools' entry, and the name the
// source gives the tool when the command knows it (from the config).
type toolEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Server      string `json:"server,omitempty"`
	Group       string `json:"group,omitempty"`
	Listed      bool   `json:"listed"`
	Original    string `json:"original,omitempty"`
}

// toolEntries turns find_tools' entries into toolEntry values.
func toolEntries(cards []disclosure.Card) []toolEntry {
	out := make([]toolEntry, len(cards))
	for i, c := range cards {
		out[i] = toolEntry{Name: c.Name, Description: c.Description, Server: c.Server, Group: c.Group, Listed: c.Listed}
	}
	return out
}

// listRemoteTools lists the tools of the running gateway rem names, page
// by page of its find_tools, then tells of its servers that are not ready
// when its /readyz says. --json gives each tool's whole description, which
// describe_tools tells (find_tools' is the first sentence).
func listRemoteTools(cmd *cobra.Command, rem remote, asJSON bool) error {
	r, err := dialRemote(cmd, rem)
	if err != nil {
		return err
	}
	defer r.Close()
	var cards []disclosure.Card
	for cursor := ""; ; {
		args := map[string]any{"limit": 50}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, raw, err := callOn(cmd, r, disclosure.FindTools, args)
		if err != nil {
			return err
		}
		var found *disclosure.FindResult
		if res == nil || res.IsError || json.Unmarshal(res.Structured, &found) != nil || found == nil {
			var text []string
			if res != nil {
				text = res.texts()
			}
			return fmt.Errorf("%s on %s did not list the tools (is it a skillgate gateway?): %s", disclosure.FindTools, r.URL(),
				cmp.Or(strings.Join(text, " "), string(raw)))
		}
		cards = append(cards, found.Tools...)
		if cursor = found.NextCursor; cursor == "" || len(found.Tools) == 0 {
			break
		}
	}
	if asJSON {
		tools := toolEntries(cards)
		desc, err := remoteDescriptions(cmd, r, cards)
		if err != nil {
			return err
		}
		for i := range tools {
			if d := desc[tools[i].Name]; d != "" {
				tools[i].Description = d
			}
		}
		if err := printJSON(cmd.OutOrStdout(), map[string]any{"tools": tools}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tORIGINAL\tDESCRIPTION")
		for _, c := range cards {
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\n", c.Name, cmp.Or(c.Server, "-"), oneline.Cut(c.Description, 60))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	// A gateway that keeps its status for token holders still lists.
	if st, _, _, err := fetchStatus(cmd.Context(), rem); err == nil {
		printNotReady(cmd.ErrOrStderr(), st, nil)
	}
	return nil
}

// remoteDescriptions returns the whole description of each of cards' tools
// by name, from the gateway's describe_tools, 20 names a call (its most).
func remoteDescriptions(cmd *cobra.Command, r *gateway.Remote, cards []disclosure.Card) (map[string]string, error) {
	desc := map[string]string{}
	for batch := range slices.Chunk(cards, 20) {
		names := make([]string, len(batch))
		for i, c := range batch {
			names[i] = c.Name
		}
		res, raw, err := callOn(cmd, r, disclosure.DescribeTools, map[string]any{"names": names})
		if err != nil {
			return nil, err
		}
		var defs []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		if res == nil || res.IsError || len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &defs) != nil {
			return nil, fmt.Errorf("%s on %s did not describe the tools (is it a skillgate gateway?): %s", disclosure.DescribeTools, r.URL(), raw)
		}
		for _, d := range defs {
			desc[d.Name] = strings.TrimSpace(d.Description)
		}
	}
	return desc, nil
}

// remoteResult is the CallToolResult of a tool of a running gateway, its
// structured content left as JSON.
type remoteResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

// texts returns the text of each of r's content blocks.
func (r *remoteResult) texts() []string {
	out := make([]string, 0, len(r.Content))
	for _, c := range r.Content {
		out = append(out, c.Text)
	}
	return out
}

// callRemoteTool calls tool with args on the running gateway rem names,
// and returns its result, decoded (nil when it is not a CallToolResult)
// and as it came. An error is one of the call.
func callRemoteTool(cmd *cobra.Command, rem remote, tool string, args any) (*remoteResult, json.RawMessage, error) {
	r, err := dialRemote(cmd, rem)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	return callOn(cmd, r, tool, args)
}

// dialRemote connects to the running gateway rem names, for one command's
// calls.
func dialRemote(cmd *cobra.Command, rem remote) (*gateway.Remote, error) {
	return gateway.DialRemote(cmd.Context(), newLogger(cmd, cmd.ErrOrStderr()), rem.url, rem.bearer())
}

// callOn calls tool with args over r, as callRemoteTool does.
func callOn(cmd *cobra.Command, r *gateway.Remote, tool string, args any) (*remoteResult, json.RawMessage, error) {
	in, err := json.Marshal(args)
	if err != nil {
		return nil, nil, err
	}
	res, err := r.Call(cmd.Context(), tool, in, &cliCall{w: cmd.ErrOrStderr()})
	if err != nil {
		return nil, nil, err
	}
	var out remoteResult
	if json.Unmarshal(res, &out) != nil {
		return nil, res, nil
	}
	return &out, res, nil
}

// printNotReady tells of each source of gw that is not ready (a server,
// plugin, tool folder ..., named by its kind), one line each, with what
// went wrong; a plugin that failed, also what to do. plugins holds the
// file of each plugin by name, when the command read the config.
func printNotReady(w io.Writer, st []gateway.SourceStatus, plugins map[string]string) {
	for _, s := range st {
		if s.State == "ready" {
			continue
		}
		name, e := s.Name, lastError(s)
		if s.Kind() == "plugin" {
			name = strings.TrimPrefix(s.Name, "plugin:")
			e = pluginError(s, plugins[name])
		}
		who := s.Kind() + " " + name
		if s.Kind() == s.Name {
			who = s.Name // the config's pipelines
		}
		line := fmt.Sprintf("%s is %s", who, s.State)
		if s.State == "failed" {
			line = who + " failed"
		}
		if e != "" {
			line += ": " + oneline.Clean(e)
		}
		// A refused plugin (plugin:NAME) has its error say what to do.
		if s.State == "failed" && s.Kind() == "plugin" && s.Name == s.Executor {
			if path := plugins[s.Name]; path != "" {
				line += "; fix the executor plugin " + path + " or take it out of plugins.dirs"
			} else {
				line += "; fix the executor plugin or take its file out of plugins.dirs"
			}
		}
		fmt.Fprintln(w, line)
	}
}

// pluginPaths maps the name of each executor plugin of cfg's plugins dirs
// to its file, for printNotReady.
func pluginPaths(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for _, sp := range gateway.PluginFiles(cfg) {
		out[sp.Name] = sp.Path
	}
	return out
}

// lastError is s's last error without the `source "NAME": ` that the mcp
// executor writes in front of the cause: where it is shown, the server is
// named already. The same words further in are part of the cause and
// stay.
func lastError(s gateway.SourceStatus) string {
	return strings.TrimPrefix(s.LastError, fmt.Sprintf("source %q: ", s.Name))
}

// pluginError is the last error of the plugin source s, whose file is
// path ("" when not known), without the words that name the plugin again
// where printNotReady has named it: the host's `start executor "NAME"
// (PATH): `, and the "plugin " in front of the file of a plugin the
// gateway refused (plugin:NAME), whose path stays: the line names no
// other.
func pluginError(s gateway.SourceStatus, path string) string {
	if strings.HasPrefix(s.Name, "plugin:") {
		return strings.TrimPrefix(s.LastError, "plugin ")
	}
	e := strings.TrimPrefix(s.LastError, fmt.Sprintf("start executor %q: ", s.Name))
	if path != "" {
		e = strings.TrimPrefix(e, fmt.Sprintf("start executor %q (%s): ", s.Name, path))
	}
	return e
}

func newProfilesCmd() *cobra.Command {
	var asJSON bool
	var rem remote
	cmd := &cobra.Command{
		Use: "profiles",
		Example: `  skillgate profiles
  skillgate profiles -c skillgate.yaml --json
  skillgate profiles --url http://127.0.0.1:8811`,
		Short: "List the endpoints (/mcp and each profile) with their tool counts and token cost",
		Long: `Start the configured servers, measure every endpoint's tools/list and stop
them again. LISTED is what a new client sees before it activates anything
(the five meta-tools included); SERVED is every tool the endpoint can run.
Token counts are estimates (see README, Progressive disclosure). A server
that is not ready is told of on stderr, after the table; the gateway's log
is left out unless --log-level asks for it. With --url, read a running
gateway's /stats instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rem.url != "" {
				stats, err := fetchStats(cmd.Context(), rem)
				if err != nil {
					return err
				}
				return printStats(cmd, stats, nil, asJSON)
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			gw, err := startSilent(cmd)
			if err != nil {
				return err
			}
			defer gw.Close()
			desc := map[string]string{}
			for name, p := range cfg.Profiles {
				desc[name] = p.Description
			}
			if err := printStats(cmd, gw.Stats(), desc, asJSON); err != nil {
				return err
			}
			printNotReady(cmd.ErrOrStderr(), gw.Status(), pluginPaths(cfg))
			for _, w := range gateway.DisclosureWarnings(gw, cfg) {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			if !allReady(gw.Status()) && (len(cfg.Pinned) > 0 || len(cfg.Bundles) > 0 || len(cfg.Profiles) > 0) {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: the names in pinned:, bundles and profiles are checked against the tools once every server is ready; run again then")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rem.flags(cmd)
	return cmd
}

// printStats prints endpoint stats as a table or JSON; desc, when not nil,
// adds each profile's description.
func printStats(cmd *cobra.Command, stats []disclosure.EndpointStats, desc map[string]string, asJSON bool) error {
	if asJSON {
		type row struct {
			disclosure.EndpointStats
			Description string `json:"description,omitempty"`
		}
		rows := make([]row, len(stats))
		for i, s := range stats {
			rows[i] = row{s, desc[s.Profile]}
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"endpoints": rows})
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ENDPOINT\tMODE\tLISTED\tBYTES\tTOKENS\tSERVED\tALL BYTES\tALL TOKENS\t")
	for _, s := range stats {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t~%d\t%d\t%d\t~%d\t\n", s.Endpoint, s.Mode, s.Listed, s.Bytes, s.Tokens, s.Served, s.AllBytes, s.AllTokens)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if desc != nil {
		for _, s := range stats {
			if d := desc[s.Profile]; d != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", s.Endpoint, d)
			}
		}
	}
	return nil
}

func newCallCmd() *cobra.Command {
	var in toolArgs
	var rem remote
	cmd := &cobra.Command{
		Use: "call TOOL",
		Example: `  skillgate call everything__echo --arg message=hi
  skillgate call everything__echo --arg message=hi -c skillgate.yaml
  skillgate call everything__get-sum --json '{"a":1,"b":2}' --url http://127.0.0.1:8811`,
		Short: "Call a tool, from the config or on a running gateway (--url)",
		Long: `Call one tool and print its result as JSON on stdout. Progress and log
messages go to stderr.

--arg values are parsed as JSON when they parse (numbers, true, objects),
and taken as strings otherwise, or when the tool's inputSchema says the
argument is a string (message=123 sends "123"). --arg entries are laid over
--json's object.

From the config, call calls TOOL as soon as the source that serves it is
ready, without waiting for the others to load (a plugin that hangs until
limits.load_timeout holds back only its own tools); the gateway's own
tools (admin__servers ...) wait for every source's first load. It starts
only the server whose namespace prefixes TOOL (everything__echo: the
server everything), and no other server, tools, pipelines, skills or
plugins folder. It starts everything the config
serves when TOOL is no server's (a pipeline's, a skill's, a script's, an
admin tool) or when more than one source may serve it: servers whose
namespaces both prefix it, a server with namespace: "", or a plugin or a
skill (with tools or pipelines) named like the server's namespace.

Exit status: 0 on success, 2 when the tool reported an error (isError), 1 on
other errors (unknown tool, bad arguments, gateway unreachable).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("call takes one tool name, got %d arguments: skillgate call TOOL [--arg key=value] (see skillgate tools list)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			call := &cliCall{w: cmd.ErrOrStderr()}
			var res json.RawMessage
			var err error
			if rem.url != "" {
				res, err = gateway.CallRemote(cmd.Context(), newLogger(cmd, cmd.ErrOrStderr()),
					gateway.RemoteCall{URL: rem.url, Token: rem.bearer(), Tool: args[0], Args: in.build}, call)
			} else {
				if _, err := in.build(nil); err != nil {
					return err // before starting anything
				}
				cfg, err2 := loadConfig(cmd)
				if err2 != nil {
					return err2
				}
				// A plugin or skill may serve tools in a server's
				// namespace: then the call needs everything started.
				others, err2 := gateway.NonServerNamespaces(cmd.Context(), cfg)
				if err2 == nil {
					narrowToServer(cfg, args[0], others)
				}
				gw, stop, err2 := startForCall(cmd, cfg, quietLogger(cmd, serverFailures), args[0])
				if err2 != nil {
					return err2
				}
				defer stop()
				def, ok := gw.ToolDefinition(args[0])
				if !ok {
					_, err := gw.CallTool(cmd.Context(), args[0], nil, call) // says why the tool is missing
					return err
				}
				callArgs, err2 := in.build(inputSchema(def))
				if err2 != nil {
					return err2
				}
				res, err = gw.CallTool(cmd.Context(), args[0], callArgs, call)
			}
			if err != nil {
				return err
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, res, "", "  "); err != nil {
				return fmt.Errorf("the tool's result is not JSON: %w", err)
			}
			pretty.WriteByte('\n')
			if _, err := cmd.OutOrStdout().Write(pretty.Bytes()); err != nil {
				return err
			}
			var r struct {
				IsError bool `json:"isError"`
			}
			if json.Unmarshal(res, &r) == nil && r.IsError {
				return exitError(2)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&in.rawJSON, "json", "", "arguments as one JSON object")
	cmd.Flags().StringArrayVar(&in.kv, "arg", nil, "an argument as key=value (repeatable)")
	rem.flags(cmd)
	return cmd
}

// narrowToServer leaves in cfg only what a call of tool needs when tool
// is a server's: one server's namespace (with names.separator) prefixes
// it, no other server may serve it (none has namespace ""), and no other
// source may either: none of others (gateway.NonServerNamespaces: the
// plugins' and skills' namespaces) prefixes it. The other servers are
// disabled for this run, and the tools, pipelines, skills and plugins
// folders left out: none of them serves the tool, and pipelines over the
// disabled servers' tools would only report those missing. It returns
// that server, or "" when it left cfg whole: tool is no server's (a
// pipeline's, a skill's, an admin tool), or more than one source's.
func narrowToServer(cfg *config.Config, tool string, others []string) string {
	sep := cmp.Or(cfg.Names.Separator, catalog.DefaultSeparator)
	var match []string
	for _, name := range cfg.ServerOrder {
		sv := cfg.Servers[name]
		if sv == nil || sv.Disabled {
			continue
		}
		if ns := gateway.ServerNamespace(name, sv); ns == "" || strings.HasPrefix(tool, ns+sep) {
			match = append(match, name)
		}
	}
	if len(match) != 1 || slices.ContainsFunc(others, func(ns string) bool { return strings.HasPrefix(tool, ns+sep) }) {
		return ""
	}
	for name, sv := range cfg.Servers {
		if name != match[0] && sv != nil && !sv.Disabled {
			off := *sv
			off.Disabled = true
			cfg.Servers[name] = &off
		}
	}
	cfg.Tools.Dirs, cfg.Plugins.Dirs = nil, nil
	cfg.Pipelines.Dirs, cfg.Pipelines.Inline = nil, nil
	cfg.Skills.Dirs, cfg.Skills.Repos, cfg.Skills.HooksDirs = nil, nil, nil
	return match[0]
}

// cliCall prints what a tool reports while it runs to stderr.
type cliCall struct{ w io.Writer }

func (c *cliCall) Progress(p sdk.Progress) error {
	if p.Total > 0 {
		_, err := fmt.Fprintf(c.w, "progress %g/%g %s\n", p.Progress, p.Total, p.Message)
		return err
	}
	_, err := fmt.Fprintf(c.w, "progress %g %s\n", p.Progress, p.Message)
	return err
}

func (c *cliCall) Notify(n sdk.Notification) error {
	_, err := fmt.Fprintf(c.w, "%s %s\n", n.Method, n.Params)
	return err
}

func (c *cliCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "the skillgate CLI cannot answer sampling, elicitation or roots requests"}
}

func (c *cliCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

func newServersCmd() *cobra.Command {
	var rem remote
	var asJSON, wide bool
	cmd := &cobra.Command{
		Use: "servers",
		Example: `  skillgate servers
  skillgate servers -c skillgate.yaml --wide
  skillgate servers --url http://127.0.0.1:8811 --json`,
		Short: "Show each server's state, pid, restarts and last error",
		Long: `Show the state of every server, then of the executor plugin processes
that run them (pid, protocol, whether calls ride the side channel or the
gRPC stream, restarts). With --url, ask a running gateway (its /readyz);
otherwise start the configured servers once and report, without the
gateway's log (--log-level shows it). --json prints the servers only.

On a terminal, a last error longer than 80 characters is cut; --wide, --json
or output to a pipe or file shows it in full.

Exit status: 0 when every server is ready, 3 when one is not (the table is
printed either way), 1 on other errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st []gateway.SourceStatus
			var execs []gateway.ExecutorStatus
			var running *gateway.ConfigStatus
			if rem.url != "" {
				var err error
				if st, execs, running, err = fetchStatus(cmd.Context(), rem); err != nil {
					return err
				}
			} else {
				gw, err := startSilent(cmd)
				if err != nil {
					return err
				}
				st, execs = gw.Status(), gw.ExecutorsStatus()
				gw.Close()
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(st); err != nil {
					return err
				}
				return notAllReady(st)
			}
			cut := errorCutter(cmd.OutOrStdout(), wide)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tEXECUTOR\tSTATE\tPID\tRESTARTS\tTOOLS\tLAST ERROR")
			for _, s := range st {
				pid := "-"
				if s.PID > 0 {
					pid = strconv.Itoa(s.PID)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.Name, s.Executor, s.State, pid, s.Restarts, s.Tools, cut.cut(lastError(s)))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, s := range st {
				for _, p := range s.Problems {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", s.Name, oneline.Clean(p))
				}
			}
			printRequires(cmd.OutOrStdout(), st)
			if err := printExecutors(cmd.OutOrStdout(), execs, cut); err != nil {
				return err
			}
			if cut.cuts > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "(last errors cut to %d characters; --wide or --json shows them in full)\n", maxErrorWidth)
			}
			printStaleConfig(cmd.ErrOrStderr(), running)
			return notAllReady(st)
		},
	}
	rem.flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&wide, "wide", false, "show each last error in full, even on a terminal")
	return cmd
}

// maxErrorWidth is where a table cuts a last error on a terminal.
const maxErrorWidth = 80

// cutter shortens the last errors of a table to maxErrorWidth, or keeps
// them whole (on one line), and counts what it cut.
type cutter struct {
	width int // 0: keep them whole
	cuts  int
}

// errorCutter cuts on a terminal, unless wide: piped or saved, the table
// is read by a program or searched, and a cut error helps neither.
func errorCutter(w io.Writer, wide bool) *cutter {
	if f, ok := w.(*os.File); ok && !wide && isatty.IsTerminal(f.Fd()) {
		return &cutter{width: maxErrorWidth}
	}
	return &cutter{}
}

func (c *cutter) cut(s string) string {
	whole := oneline.Clean(s)
	if c.width == 0 {
		return whole
	}
	out := oneline.Cut(s, c.width)
	if out != whole {
		c.cuts++
	}
	return out
}

// printExecutors writes the executor plugin processes' table, after a
// blank line; nothing when there are none.
func printExecutors(w io.Writer, execs []gateway.ExecutorStatus, cut *cutter) error {
	if len(execs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXECUTOR\tSTATE\tPID\tPROTOCOL\tCALLS\tRESTARTS\tLAST ERROR")
	for _, e := range execs {
		pid, proto, calls := "-", "-", "-"
		if e.PID > 0 {
			pid = strconv.Itoa(e.PID)
		}
		if e.Protocol > 0 {
			proto = strconv.Itoa(e.Protocol)
		}
		if e.Calls != "" {
			calls = e.Calls
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.Name, e.State, pid, proto, calls, e.Restarts, cut.cut(e.LastError))
	}
	return tw.Flush()
}

// notAllReady is exitError(3) when a server is not ready (an invalid tool
// folder, which waits for an edit, aside), as /readyz counts them.
func notAllReady(st []gateway.SourceStatus) error {
	for _, s := range st {
		if s.State != "ready" && s.State != "invalid" {
			return exitError(3)
		}
	}
	return nil
}

// setBearer gives req the bearer token tok, if any, unless that would
// send it in plain text beyond this machine (gateway.CheckTokenTransport):
// then it fails, or with SKILLGATE_ALLOW_INSECURE=1 warns on stderr, as
// the MCP requests of --url do.
func setBearer(req *http.Request, tok string) error {
	if tok == "" {
		return nil
	}
	insecure, err := gateway.CheckTokenTransport(req.URL.String(), tok)
	if err != nil {
		return err
	}
	if insecure {
		fmt.Fprintf(os.Stderr, "skillgate: warning: sending the bearer token in plain text (http://) to %s, which is not this machine (%s=1); use https:// or an SSH tunnel to 127.0.0.1\n",
			req.URL.Host, gateway.AllowInsecureEnv)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

func fetchStatus(ctx context.Context, rem remote) ([]gateway.SourceStatus, []gateway.ExecutorStatus, *gateway.ConfigStatus, error) {
	base := rem.base()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := setBearer(req, rem.bearer()); err != nil {
		return nil, nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, nil, gateway.ReachError(req.URL.String(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return nil, nil, nil, fmt.Errorf("%s/readyz answered %s: is %s a skillgate gateway?", base, resp.Status, base)
	}
	var body struct {
		Sources   *[]gateway.SourceStatus  `json:"sources"`
		Executors []gateway.ExecutorStatus `json:"executors"`
		Detail    string                   `json:"detail"`
		Config    *gateway.ConfigStatus    `json:"config"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, nil, nil, fmt.Errorf("%s/readyz: not a skillgate status (%w)", base, err)
	}
	if body.Sources == nil {
		if body.Detail != "" && rem.bearer() != "" {
			return nil, nil, nil, fmt.Errorf("%s/readyz did not accept the token given: check --token or SKILLGATE_TOKEN against its auth.tokens", base)
		}
		if body.Detail != "" {
			return nil, nil, nil, fmt.Errorf("%s/readyz shows no details without a token: pass one of its auth.tokens with --token or SKILLGATE_TOKEN", base)
		}
		return nil, nil, nil, fmt.Errorf("%s/readyz: not a skillgate status (no sources)", base)
	}
	return *body.Sources, body.Executors, body.Config, nil
}

// printStaleConfig tells, after the tables of `servers --url`, that the
// gateway's config file changed but did not load, so the gateway still
// runs the config it loaded before.
func printStaleConfig(w io.Writer, c *gateway.ConfigStatus) {
	if c == nil || !c.Stale {
		return
	}
	when := ""
	if c.Failed != nil {
		when = " at " + c.Failed.Local().Format(time.DateTime)
	}
	fmt.Fprintf(w, "config: %s changed but did not load%s; the gateway still runs the config loaded at %s:\n",
		c.File, when, c.Loaded.Local().Format(time.DateTime))
	for _, l := range strings.Split(strings.TrimSpace(c.Error), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "fix it (skillgate validate %s); it is reloaded when saved\n", c.File)
}

// fetchStats reads the endpoint stats of the running gateway rem names,
// from its /stats.
func fetchStats(ctx context.Context, rem remote) ([]disclosure.EndpointStats, error) {
	base := rem.base()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stats", nil)
	if err != nil {
		return nil, err
	}
	if err := setBearer(req, rem.bearer()); err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, gateway.ReachError(req.URL.String(), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized && rem.bearer() != "":
		return nil, fmt.Errorf("%s/stats did not accept the token given: check --token or SKILLGATE_TOKEN against its auth.tokens", base)
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("%s/stats needs a token: pass one of its auth.tokens with --token or SKILLGATE_TOKEN", base)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s/stats answered %s: is %s a skillgate gateway?", base, resp.Status, base)
	}
	var body struct {
		Endpoints *[]disclosure.EndpointStats `json:"endpoints"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s/stats: not skillgate endpoint stats (%w)", base, err)
	}
	if body.Endpoints == nil {
		return nil, fmt.Errorf("%s/stats: not skillgate endpoint stats (no endpoints)", base)
	}
	return *body.Endpoints, nil
}

func newPluginCmd() *cobra.Command {
	plugin := &cobra.Command{Use: "plugin", Short: "Executor plugin internals", Hidden: true}
	plugin.AddCommand(&cobra.Command{
		Use:   "serve NAME",
		Short: "Serve a built-in executor as a go-plugin process (the gateway runs this itself)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log := builtin.PluginLogger()
			ex, ok := builtin.New(args[0], log)
			if !ok {
				return fmt.Errorf("no built-in executor %q (have %v)", args[0], builtin.Names())
			}
			builtin.TuneProcess(args[0])
			// Ends when the gateway stops it, on SIGTERM, or when the
			// gateway dies (even of SIGKILL); what the executor started,
			// grandchildren included, is stopped first. SIGINT is left to
			// the gateway, which stops its plugins in order.
			host.ServeBuiltin(ex, log)
			return nil
		},
	})
	return plugin
}

// allReady reports whether every source in st is ready.
func allReady(st []gateway.SourceStatus) bool {
	for _, s := range st {
		if s.State != "ready" {
			return false
		}
	}
	return true
}
