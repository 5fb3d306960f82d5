package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/internal/suggest"
	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/sdk"
)

func newPipelineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Validate, inspect and run YAML pipelines",
		Long: `Pipelines are tools made of other tools, written in YAML (docs/PIPELINES.md).
The gateway serves each one as pipelines__<name>. These commands work on the
pipelines of the config -c names (pipelines.dirs and pipelines.inline); the
built-in default has only examples/pipelines, from the repository root:

  skillgate pipeline list -c skillgate.yaml
  skillgate pipeline validate -c skillgate.yaml --all
  skillgate pipeline validate -c skillgate.yaml pipelines/hello.yaml
  skillgate pipeline graph -c skillgate.yaml hello --mermaid
  skillgate pipeline run -c skillgate.yaml hello --arg who=ann --dry-run
  skillgate pipeline run -c skillgate.yaml hello --arg who=ann
  skillgate pipeline runs --url http://127.0.0.1:8811`,
	}
	cmd.AddCommand(newPipelineValidateCmd(), newPipelineListCmd(), newPipelineGraphCmd(), newPipelineRunCmd(), newPipelineRunsCmd())
	return cmd
}

// problemsJSON is ps as --json prints them.
func problemsJSON(ps []*pipelines.Error) []validateProblem {
	out := make([]validateProblem, 0, len(ps))
	for _, p := range ps {
		out = append(out, pipelineProblemOf(p))
	}
	return out
}

type pipelineJSON struct {
	Name        string `json:"name"`
	Tool        string `json:"tool"`
	Description string `json:"description,omitempty"`
	Pos         string `json:"pos"`
	Steps       int    `json:"steps"`
}

func pipelinesJSON(list []*pipelines.Pipeline) []pipelineJSON {
	out := make([]pipelineJSON, 0, len(list))
	for _, p := range list {
		out = append(out, pipelineJSON{Name: p.Name, Tool: p.ToolName, Description: p.Description, Pos: p.Pos.String(), Steps: len(p.Steps)})
	}
	return out
}

// printJSON writes v as indented JSON, with <, > and & as they are: the
// output is read by people and programs, never embedded in HTML.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// unescapeHTML turns the \u003c, \u003e and \u0026 escapes in the strings of
// JSON text b back into <, > and &, which Go's encoder writes for HTML.
func unescapeHTML(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(b):
			if b[i+1] == 'u' && i+6 <= len(b) {
				switch strings.ToLower(string(b[i+2 : i+6])) {
				case "003c", "003e", "0026":
					r, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 8)
					out = append(out, byte(r))
					i += 5
					continue
				}
			}
			out = append(out, c, b[i+1])
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

// loadPipelinesOffline compiles the config's pipelines without starting
// anything; tool names are not checked.
func loadPipelinesOffline(cmd *cobra.Command) (*config.Config, []*pipelines.Pipeline, []*pipelines.Error, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	list, lerr := gateway.PipelineLoader(cfg, nil).Load(cfg.Pipelines.Dirs...)
	return cfg, list, gateway.PipelineProblems(lerr), nil
}

// findPipeline returns the pipeline called name, or an error that lists
// the problems when it did not compile.
func findPipeline(list []*pipelines.Pipeline, problems []*pipelines.Error, name string) (*pipelines.Pipeline, error) {
	for _, p := range list {
		if p.Name == name || p.ToolName == name {
			return p, nil
		}
	}
	var own []string
	names := make([]string, 0, len(list))
	for _, p := range list {
		names = append(names, p.Name)
	}
	for _, e := range problems {
		if e.Pipeline == name {
			own = append(own, "  "+e.Error())
		}
		if e.Pipeline != "" && !slices.Contains(names, e.Pipeline) {
			names = append(names, e.Pipeline)
		}
	}
	if len(own) > 0 {
		return nil, fmt.Errorf("pipeline %q has problems and is not served; fix them (`skillgate pipeline validate --all` checks again):\n%s", name, strings.Join(own, "\n"))
	}
	msg := fmt.Sprintf("no pipeline %q in the config", name)
	switch near, ok := suggest.Closest(name, names); {
	case ok:
		msg += fmt.Sprintf("; did you mean %q?", near)
	case len(names) == 0:
		msg += "; it has none"
	default:
		msg += " (have: " + strings.Join(names, ", ") + ")"
	}
	if len(problems) > 0 {
		lines := []string{msg + "; some pipelines did not compile:"}
		for _, p := range problems {
			lines = append(lines, "  "+p.Error())
		}
		msg = strings.Join(lines, "\n")
	}
	return nil, errors.New(msg)
}

func newPipelineValidateCmd() *cobra.Command {
	var all, noTools, asJSON bool
	cmd := &cobra.Command{
		Use: "validate [FILE...] | --all",
		Example: `  skillgate pipeline validate --all -c skillgate.yaml
  skillgate pipeline validate --no-tools pipelines/echo_fanout.yaml
  skillgate pipeline validate --all -c skillgate.yaml --json`,
		Short: "Check pipeline files and report every problem with file:line:col",
		Long: `Compile pipeline files (or, with --all, every pipeline of the config) and
report every problem at once: YAML, unknown keys, expression syntax and
types, unknown step ids, forward references, unknown tools.

Tool names are checked against the tools the config serves, so the
configured servers are started once (as "skillgate tools list" does);
--no-tools skips that check and starts nothing. With the servers started,
each step's arguments are checked against its tool's input schema too: an
argument the schema does not list, or a required one the step does not
set, is a warning ("FILE:LINE:COL: warning: ..."), since the server owns
the schema and the gateway serves the pipeline anyway. The files'
pipelines may call each other and the config's pipelines.

Problems, warnings and the pipelines that compile go to stderr, and nothing
to stdout. --json prints {"ok", "errors", "warnings", "problems": [...],
"pipelines": [...]} on stdout instead, and nothing on stderr: each problem
(errors and warnings) with file, line, column, field, message, severity and
source, as "skillgate validate" prints them.

Exit status: 0 when everything compiles (with warnings or not), 1 when
there are problems.`,
		RunE: func(cmd *cobra.Command, files []string) error {
			if all == (len(files) > 0) {
				return errors.New("name pipeline files, or use --all for the config's pipelines")
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			var tools func(string) bool
			var toolNames func() []string
			var toolSchema func(string) json.RawMessage
			var pending func(string) string
			var served []*pipelines.Pipeline
			if !noTools {
				gw, err := startQuiet(cmd, pipelineProblems)
				if err != nil {
					return err
				}
				defer gw.Close()
				snap := gw.Snapshot()
				tools = func(name string) bool {
					it, ok := snap.Tool(name)
					return ok && it.Source != "pipelines"
				}
				toolNames = func() []string {
					var out []string
					for _, it := range snap.Tools() {
						if it.Source != "pipelines" {
							out = append(out, it.Name)
						}
					}
					return out
				}
				toolSchema = gateway.PipelineToolSchema(snap)
				pending = gw.PendingTool // a failed server's tool is no unknown tool
				served, _ = gw.Pipelines()
			}
			var list []*pipelines.Pipeline
			var problems []*pipelines.Error
			if all {
				l := gateway.PipelineLoader(cfg, tools)
				l.ToolNames = toolNames
				l.ToolSchema = toolSchema
				l.ToolPending = pending
				ps, err := l.Load(cfg.Pipelines.Dirs...)
				list, problems = ps, gateway.PipelineProblems(err)
			} else {
				list, problems = validateFiles(cfg, files, checks{tools, toolNames, toolSchema, pending}, served)
			}
			// Warnings (a step's argument its tool's schema does not
			// list) do not keep a pipeline from being served: told, they
			// do not fail the command.
			var warnings []*pipelines.Error
			for _, p := range list {
				warnings = append(warnings, p.Warnings...)
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), problemEnvelope(problemsJSON(append(problems, warnings...)),
					map[string]any{"pipelines": pipelinesJSON(list)})); err != nil {
					return err
				}
			} else {
				w := cmd.ErrOrStderr()
				for _, p := range problems {
					fmt.Fprintln(w, p)
				}
				for _, p := range warnings {
					fmt.Fprintln(w, p) // "file:line:col: warning: ..."
				}
				for _, p := range list {
					fmt.Fprintf(w, "%s: ok (%s, %s)\n", p.Pos, p.ToolName, stepCount(len(p.Steps)))
				}
				if noTools {
					fmt.Fprintln(w, "(tool names not checked: --no-tools)")
				}
				if len(problems) > 0 {
					fmt.Fprintln(w, countProblems(len(problems)))
				}
			}
			if len(problems) > 0 {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "validate every pipeline of the config (pipelines.dirs and pipelines.inline)")
	cmd.Flags().BoolVar(&noTools, "no-tools", false, "do not check tool names (starts no server)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the pipelines and every problem as JSON on stdout")
	return cmd
}

// countProblems is "1 problem" or "n problems".
func countProblems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return fmt.Sprintf("%d problems", n)
}

// checks are what validateFiles checks steps' tools with (the
// pipelines.Loader fields of the same names); all nil without a gateway.
type checks struct {
	tools       func(string) bool
	toolNames   func() []string
	toolSchema  func(string) json.RawMessage
	toolPending func(string) string
}

// validateFiles compiles each file, knowing the pipelines of every file
// and of the config (served) by name.
func validateFiles(cfg *config.Config, files []string, c checks, served []*pipelines.Pipeline) ([]*pipelines.Pipeline, []*pipelines.Error) {
	tools, toolNames := c.tools, c.toolNames
	names := map[string]bool{}
	for _, p := range served {
		names[p.ToolName] = true
	}
	var (
		list     []*pipelines.Pipeline
		problems []*pipelines.Error
		srcs     = map[string][]byte{}
	)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			problems = append(problems, &pipelines.Error{Pos: pipelines.Pos{File: f}, Msg: err.Error()})
			continue
		}
		srcs[f] = b
		ps, _ := gateway.PipelineLoader(cfg, nil).Parse(bytes.NewReader(b), f)
		for _, p := range ps {
			names[p.ToolName] = true
		}
	}
	var check func(string) bool
	if tools != nil {
		check = func(name string) bool { return names[name] || tools(name) }
	}
	for _, f := range files {
		b, ok := srcs[f]
		if !ok {
			continue
		}
		l := gateway.PipelineLoader(cfg, check)
		l.Inline = nil
		l.ToolSchema = c.toolSchema
		l.ToolPending = c.toolPending
		if toolNames != nil {
			l.ToolNames = func() []string { return append(slices.Sorted(maps.Keys(names)), toolNames()...) }
		}
		ps, err := l.Parse(bytes.NewReader(b), f)
		list = append(list, ps...)
		problems = append(problems, gateway.PipelineProblems(err)...)
	}
	return duplicateNames(list, problems, served)
}

// duplicateNames reports the pipelines of list that share a name with one
// of another file, in list or served (as the gateway would), and leaves
// them out of list.
func duplicateNames(list []*pipelines.Pipeline, problems []*pipelines.Error, served []*pipelines.Pipeline) ([]*pipelines.Pipeline, []*pipelines.Error) {
	abs := func(f string) string {
		if a, err := filepath.Abs(f); err == nil {
			return a
		}
		return f
	}
	byName := map[string][]*pipelines.Pipeline{}
	files := map[string]bool{}
	for _, p := range list {
		byName[p.Name] = append(byName[p.Name], p)
		files[abs(p.Pos.File)] = true
	}
	servedFrom := map[string]*pipelines.Pipeline{}
	for _, p := range served {
		if !files[abs(p.Pos.File)] {
			servedFrom[p.Name] = p
		}
	}
	var kept []*pipelines.Pipeline
	for _, p := range list {
		var others []string
		for _, o := range byName[p.Name] {
			if o != p && abs(o.Pos.File) != abs(p.Pos.File) {
				others = append(others, o.Pos.String())
			}
		}
		switch {
		case servedFrom[p.Name] != nil:
			problems = append(problems, &pipelines.Error{Pos: p.Pos, Field: "name", Msg: fmt.Sprintf(
				"pipeline %q is already served from %s; this definition is not served until one of them is renamed or removed", p.Name, servedFrom[p.Name].Pos)})
		case len(others) > 0:
			problems = append(problems, &pipelines.Error{Pos: p.Pos, Field: "name", Msg: fmt.Sprintf(
				"pipeline %q is also defined at %s; neither is served until one is renamed or removed", p.Name, strings.Join(others, ", "))})
		default:
			kept = append(kept, p)
		}
	}
	return kept, problems
}

func newPipelineListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list",
		Example: `  skillgate pipeline list -c skillgate.yaml
  skillgate pipeline list -c skillgate.yaml --json`,
		Short: "List the config's pipelines with their tool names and files",
		Long: `List the config's pipelines without starting anything (tool names are not
checked; "pipeline validate --all" does). Problems go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, list, problems, err := loadPipelinesOffline(cmd)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"pipelines": pipelinesJSON(list), "problems": problemsJSON(problems)})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tSTEPS\tFILE\tDESCRIPTION")
			for _, p := range list {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.ToolName, len(p.Steps), p.Pos, oneline.Cut(p.Description, 60))
			}
			tw.Flush()
			for _, p := range problems {
				fmt.Fprintln(cmd.ErrOrStderr(), "problem:", p)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newPipelineGraphCmd() *cobra.Command {
	var mermaid, asJSON bool
	cmd := &cobra.Command{
		Use: "graph NAME",
		Example: `  skillgate pipeline graph echo_fanout -c skillgate.yaml
  skillgate pipeline graph echo_fanout -c skillgate.yaml --mermaid`,
		Short: "Print a pipeline's step graph: stages of steps that run in parallel, or Mermaid",
		Long: `Print the steps of pipeline NAME as stages: the steps of one stage may run
in parallel, each after the steps it waits for. --mermaid prints a Mermaid
flowchart (paste it into a Markdown file or mermaid.live); --json the steps
with their dependencies. Nothing is started.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, list, problems, err := loadPipelinesOffline(cmd)
			if err != nil {
				return err
			}
			p, err := findPipeline(list, problems, args[0])
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				type stepJSON struct {
					ID       string   `json:"id"`
					Tool     string   `json:"tool"`
					Pos      string   `json:"pos"`
					Deps     []string `json:"deps"`
					If       string   `json:"if,omitempty"`
					ForEach  string   `json:"for_each,omitempty"`
					OnError  string   `json:"on_error"`
					Fallback bool     `json:"fallback,omitempty"`
				}
				steps := make([]stepJSON, 0, len(p.Steps))
				for _, s := range p.Steps {
					deps := s.Deps
					if deps == nil {
						deps = []string{}
					}
					steps = append(steps, stepJSON{ID: s.ID, Tool: s.Tool, Pos: s.Pos.String(), Deps: deps, If: s.If, ForEach: s.ForEach, OnError: s.OnError, Fallback: s.Fallback})
				}
				return printJSON(cmd.OutOrStdout(), map[string]any{"name": p.Name, "tool": p.ToolName, "steps": steps})
			case mermaid:
				_, err = io.WriteString(cmd.OutOrStdout(), p.Mermaid())
			default:
				_, err = io.WriteString(cmd.OutOrStdout(), p.Graph())
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&mermaid, "mermaid", false, "print a Mermaid flowchart")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the steps and their dependencies as JSON")
	return cmd
}

func newPipelineRunCmd() *cobra.Command {
	var in toolArgs
	var dryRun bool
	cmd := &cobra.Command{
		Use: "run NAME",
		Example: `  skillgate pipeline run echo_fanout -c skillgate.yaml --json '{"messages":["a","b"]}'
  skillgate pipeline run city_weather -c skillgate.yaml --arg city=Chicago
  skillgate pipeline run echo_fanout -c skillgate.yaml --arg messages='["a"]' --dry-run`,
		Short: "Run a pipeline against the config's servers, with per-step progress on stderr",
		Long: `Start the configured servers, run pipeline NAME once and print its result
(an MCP CallToolResult) as JSON on stdout. Each step's progress goes to
stderr as it happens, then the run's step timings.

--arg values are parsed as JSON when they parse (numbers, true, lists),
and taken as strings otherwise. --dry-run starts nothing: it prints the
plan, each step's arguments with everything known before the run (the
inputs, defaults, constants) filled in.

The gateway's log stays out (a pipeline that does not compile, or a step
that fails, says why itself); --log-level shows it.

Exit status: 0 on success, 2 when the pipeline failed (isError), 1 on
other errors.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := in.build(nil); err != nil {
				return err // before starting anything
			}
			if dryRun {
				_, list, problems, err := loadPipelinesOffline(cmd)
				if err != nil {
					return err
				}
				p, err := findPipeline(list, problems, args[0])
				if err != nil {
					return err
				}
				callArgs, err := in.build(inputSchema(p.Tool()))
				if err != nil {
					return err
				}
				if err := unknownInputs(p, callArgs); err != nil {
					return err
				}
				plan, err := p.Plan(callArgs)
				if err != nil {
					return err
				}
				_, err = io.WriteString(cmd.OutOrStdout(), plan)
				return err
			}
			// The run's own lines say what went wrong (a pipeline that did
			// not compile lists its problems, each naming the server it
			// waits for; a failed step says why): the gateway's records
			// of the same failures stay out unless --log-level asks.
			drop := maps.Clone(serverFailures)
			maps.Copy(drop, pipelineProblems)
			gw, err := startQuiet(cmd, drop)
			if err != nil {
				return err
			}
			defer gw.Close()
			list, problems := gw.Pipelines()
			p, err := findPipeline(list, problems, args[0])
			if err != nil {
				return err
			}
			callArgs, err := in.build(inputSchema(p.Tool()))
			if err != nil {
				return err
			}
			if err := unknownInputs(p, callArgs); err != nil {
				return err
			}
			res, err := gw.CallTool(cmd.Context(), p.ToolName, callArgs, &stepPrinter{w: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, unescapeHTML(res), "", "  "); err != nil {
				return fmt.Errorf("the result is not JSON: %w", err)
			}
			pretty.WriteByte('\n')
			if _, err := cmd.OutOrStdout().Write(pretty.Bytes()); err != nil {
				return err
			}
			for _, r := range gw.PipelineRuns() {
				if r.Pipeline == p.Name {
					fmt.Fprint(cmd.ErrOrStderr(), gateway.FormatRun(r))
					break
				}
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
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan with the bindings known before the run, and start nothing")
	return cmd
}

// stepPrinter prints a pipeline's progress, one line per step event.
type stepPrinter struct {
	cliCall
	w io.Writer
}

func (s *stepPrinter) Progress(p sdk.Progress) error {
	_, err := fmt.Fprintln(s.w, p.Message)
	return err
}

func (s *stepPrinter) Notify(n sdk.Notification) error {
	_, err := fmt.Fprintf(s.w, "%s %s\n", n.Method, n.Params)
	return err
}

func newPipelineRunsCmd() *cobra.Command {
	var rem remote
	var pipeline string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use: "runs [RUN_ID] --url URL",
		Example: `  skillgate pipeline runs --url http://127.0.0.1:8811/mcp
  skillgate pipeline runs --url http://127.0.0.1:8811/mcp --pipeline echo_fanout --limit 5
  skillgate pipeline runs 3f2a9c0d1e4b5a69 --url http://127.0.0.1:8811/mcp`,
		Short: "Show the recent runs of a running gateway, or one run's step timings",
		Long: `Ask a running gateway (its pipeline__runs tool) for its latest pipeline
runs, newest first, or for one run by id (failed results name their run):
each step's status, duration, attempts and error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rem.url == "" {
				return errors.New("runs needs a running gateway: --url http://127.0.0.1:8811/mcp (a one-shot command keeps no history)")
			}
			in := map[string]any{"limit": limit}
			if len(args) == 1 {
				in["id"] = args[0]
			}
			if pipeline != "" {
				in["pipeline"] = pipeline
			}
			r, res, err := callRemoteTool(cmd, rem, "pipeline__runs", in)
			if err != nil {
				return err
			}
			if r == nil {
				return fmt.Errorf("pipeline__runs on %s answered what is not a tool result (is it a skillgate gateway?): %s", gateway.MCPURL(rem.url), res)
			}
			if r.IsError {
				msg := strings.TrimSpace(strings.Join(r.texts(), "\n"))
				if len(args) == 1 && strings.HasPrefix(msg, "no run ") {
					msg = fmt.Sprintf("no run %q is kept by the gateway at %s; `skillgate pipeline runs --url %s` lists the ones that are", args[0], rem.url, rem.url)
				}
				return errors.New(msg)
			}
			if !asJSON {
				for _, text := range r.texts() {
					fmt.Fprint(cmd.OutOrStdout(), text)
				}
				return nil
			}
			var v any
			_ = json.Unmarshal(r.Structured, &v)
			return printJSON(cmd.OutOrStdout(), v)
		},
	}
	rem.flags(cmd)
	cmd.Flags().StringVar(&pipeline, "pipeline", "", "only this pipeline's runs")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// stepCount is "1 step" or "n steps".
func stepCount(n int) string {
	if n == 1 {
		return "1 step"
	}
	return strconv.Itoa(n) + " steps"
}

// unknownInputs refuses arguments that p's inputs schema does not name,
// unless it lets other names in (additionalProperties): such an argument
// would be dropped without a word, and is most often a typo.
func unknownInputs(p *pipelines.Pipeline, args json.RawMessage) error {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Additional json.RawMessage            `json:"additionalProperties"`
	}
	_ = json.Unmarshal(inputSchema(p.Tool()), &schema)
	if a := strings.TrimSpace(string(schema.Additional)); a != "" && a != "false" {
		return nil
	}
	var got map[string]json.RawMessage
	if json.Unmarshal(args, &got) != nil {
		return nil
	}
	known := slices.Sorted(maps.Keys(schema.Properties))
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := schema.Properties[name]; ok {
			continue
		}
		msg := fmt.Sprintf("pipeline %s has no input %q", p.Name, name)
		switch near, ok := suggest.Closest(name, known); {
		case ok:
			msg += fmt.Sprintf("; did you mean %q?", near)
		case len(known) == 0:
			msg += "; it takes no arguments"
		default:
			msg += "; its inputs are " + strings.Join(known, ", ")
		}
		return errors.New(msg)
	}
	return nil
}
