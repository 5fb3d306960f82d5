package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/skills"
	"github.com/skillgate/skillgate/skills/gitsource"
)

func newSkillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List, show, run and validate skills (SKILL.md folders)",
		Long: `Skills are folders with a SKILL.md (docs/SKILLS.md). These commands work on
the skills dirs of the config (the built-in default has examples/skills) and
the skill repositories the gateway checked out for it, or on the folders
given with --dir (a skills folder, or one skill's folder):

  skillgate skills ls
  skillgate skills show csv-insights --section "Read the profile"
  skillgate skills run csv-insights profile.py data.csv -- --top 5
  skillgate skills validate ./skills`,
	}
	cmd.PersistentFlags().StringSlice("dir", nil, "skills folder, or one skill's folder (repeatable; default: the config's skills dirs)")
	cmd.AddCommand(newSkillsLsCmd(), newSkillsShowCmd(), newSkillsRunCmd(), newSkillsValidateCmd())
	return cmd
}

// openSkills opens the library of --dir, or of the config's skills dirs
// plus the skill repositories the gateway has checked out for the config
// (as it serves them: the config's and those added through @skill),
// without fetching, with the gateway's options (reserved names, output
// budget). Problems are not logged: the commands print them.
func openSkills(cmd *cobra.Command, ex sdk.Executor) (*skills.Library, *config.Config, func(), error) {
	cfg, err := loadSkillsConfig(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	dirs, _ := cmd.Flags().GetStringSlice("dir")
	fromFlag := len(dirs) > 0
	var repos []*config.SkillRepo
	if !fromFlag {
		dirs, repos = cfg.Skills.Dirs, cfg.Skills.Repos
	}
	reposDir := gateway.SkillReposDirFor(cfg)
	_, err = os.Stat(filepath.Join(reposDir, "repos.json"))
	haveRepos := err == nil && !fromFlag
	if len(dirs) == 0 && len(repos) == 0 && !haveRepos {
		return nil, nil, nil, fmt.Errorf("no skills folders: give --dir, or set skills.dirs or skills.repos in the config")
	}
	opts := gateway.SkillsOptions(cfg)
	opts.Dirs = dirs
	if fromFlag {
		opts.HooksDirs = nil // the config's hooks guard the config's skills
	}
	opts.Executor, opts.NoWatch, opts.Interval = ex, true, -1
	lib, err := skills.Open(cmd.Context(), opts)
	if err != nil {
		return nil, nil, nil, err
	}
	done := func() { _ = lib.Close() }
	if fromFlag {
		return lib, cfg, done, nil
	}
	fetched := map[string]bool{}
	if haveRepos {
		// gitsource.New adds what is checked out, at its pinned commits;
		// it never fetches.
		mgr, err := gitsource.New(cmd.Context(), reposDir, lib)
		if err != nil {
			_ = lib.Close()
			return nil, nil, nil, fmt.Errorf("skill repositories in %s: %w", reposDir, err)
		}
		done = func() { _ = mgr.Close(); _ = lib.Close() }
		for _, r := range mgr.List() {
			fetched[r.Name] = true
		}
	}
	for _, r := range repos {
		if !fetched[r.Name] {
			fmt.Fprintf(cmd.ErrOrStderr(), "skillgate: skill repository %q (%s) is not fetched yet; start the gateway once (skillgate run) to fetch it\n", r.Name, r.URL)
		}
	}
	return lib, cfg, done, nil
}

// loadSkillsConfig reads the config of the skills commands, which read
// only its skills section and what that needs (as the services commands
// read only what they use): a ${VAR} not set elsewhere (a pipelines dir,
// a server's env, auth.tokens) is no error; one in a skills setting is,
// at its file:line (config.ParseForSkills).
func loadSkillsConfig(cmd *cobra.Command) (*config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		return config.BuiltinDefault(), nil
	}
	return config.LoadForSkills(path)
}

// lookupSkill finds a skill for a command, with a hint the shell user can
// follow; a broken skill's error says what is broken and where.
func lookupSkill(lib *skills.Library, name string) (*skills.Skill, error) {
	sk, err := lib.Lookup(name)
	if errors.Is(err, skills.ErrUnknownSkill) && !errors.Is(err, skills.ErrBrokenSkill) {
		return nil, fmt.Errorf("unknown skill %q; `skillgate skills ls` lists the skills", name)
	}
	return sk, err
}

func newSkillsLsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "ls [query]",
		Example: `  skillgate skills ls
  skillgate skills ls csv --dir examples/skills
  skillgate skills ls --tag data --json`,
		Short: "List the skills (best match first with a query)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, _, done, err := openSkills(cmd, nil)
			if err != nil {
				return err
			}
			defer done()
			q := ""
			if len(args) == 1 {
				q = args[0]
			}
			tag, _ := cmd.Flags().GetString("tag")
			snap := lib.Snapshot()
			ms := snap.Find(q, tag)
			out := cmd.OutOrStdout()
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				type row struct {
					ID          string   `json:"id"`
					Description string   `json:"description"`
					Version     string   `json:"version,omitempty"`
					Tags        []string `json:"tags,omitempty"`
					Scripts     []string `json:"scripts,omitempty"`
					Dir         string   `json:"dir"`
					Source      string   `json:"source"`
				}
				rows := []row{}
				for _, m := range ms {
					s := m.Skill
					rows = append(rows, row{s.ID, s.Meta.Description, s.Meta.Version, s.Meta.Tags, s.Scripts, s.Dir, s.Source})
				}
				return writeSkillsJSON(out, map[string]any{"skills": rows, "problems": orEmpty(snap.Problems())})
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SKILL\tVERSION\tSCRIPTS\tSOURCE\tDESCRIPTION")
			for _, m := range ms {
				s := m.Skill
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.Meta.Version, len(s.Scripts), s.Source, oneline.Cut(s.Meta.Description, 70))
			}
			tw.Flush()
			for _, p := range snap.Problems() {
				fmt.Fprintln(cmd.ErrOrStderr(), p)
			}
			return nil
		},
	}
	cmd.Flags().String("tag", "", "only skills with this tag")
	cmd.Flags().Bool("json", false, "print JSON")
	return cmd
}

// orEmpty makes a nil list an empty one, so JSON says [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeSkillsJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newSkillsShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "show SKILL",
		Example: `  skillgate skills show csv-insights --dir examples/skills
  skillgate skills show csv-insights --section "Read the profile"`,
		Short: "Print a skill's instructions (or one section) and what it brings",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, _, done, err := openSkills(cmd, nil)
			if err != nil {
				return err
			}
			defer done()
			sk, err := lookupSkill(lib, args[0])
			if err != nil {
				return err
			}
			section, _ := cmd.Flags().GetString("section")
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				body, sections, err := lib.Body(sk)
				if err != nil {
					return err
				}
				if section != "" {
					if body, err = lib.Section(sk, section); err != nil {
						return err
					}
				}
				return writeSkillsJSON(cmd.OutOrStdout(), map[string]any{
					"id": sk.ID, "name": sk.Meta.Name, "description": sk.Meta.Description, "version": sk.Meta.Version,
					"tags": orEmpty(sk.Meta.Tags), "dir": sk.Dir, "source": sk.Source, "frontmatter": sk.Meta.Raw,
					"scripts": orEmpty(sk.Scripts), "requires": sk.Meta.Requires, "sections": orEmpty(sections),
					"instructions": body, "problems": orEmpty(sk.Problems),
				})
			}
			raw, err := skills.NewServer(lib).CallTool(cmd.Context(), skills.ToolLoad, mustJSON(map[string]string{"skill": sk.ID, "section": section}), nil)
			if err != nil {
				return err
			}
			text, isErr := resultOf(raw)
			if isErr {
				return fmt.Errorf("%s", strings.TrimPrefix(text, skills.ToolLoad+": "))
			}
			fmt.Fprint(cmd.OutOrStdout(), text)
			return nil
		},
	}
	cmd.Flags().String("section", "", "only this heading's section")
	cmd.Flags().Bool("json", false, "print JSON: the skill, its sections and its instructions")
	return cmd
}

func newSkillsRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "run SKILL SCRIPT [--] [ARGS...]",
		Example: `  skillgate skills run csv-insights profile.py data.csv --top 5
  echo "the text" | skillgate skills run text-stats wc.py 5
  skillgate skills run --dir examples/skills csv-insights profile.py data.csv`,
		Short: "Run a skill's script (with its policy and hooks) and print its output",
		Long: `Runs a script of the skill as the gateway would (a name under scripts/, such
as profile.py, or a path in the skill's folder, such as
ooxml/scripts/unpack.py; never SKILL.md or a hook): through the
script executor (in process here), with the skill's timeouts and hooks and
the config's output budget (SKILLGATE_OUTPUT_BUDGET, the result shaped to
it). The script runs in the skill's folder, so an argument naming a file
that exists relative to your working folder is passed as its absolute path.
Text piped to this command (echo text | skillgate skills run ...) reaches
the script as run_skill_script's input does, as {"input": "text"} on its
stdin; --input gives JSON instead. A command whose stdin is a pipe that
never closes waits for it: give it < /dev/null.
Flags of this command come before SKILL; everything after SCRIPT goes to the
script, flags included; a -- right after SCRIPT is dropped (write -- -- to
pass one).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, ok := builtin.New("script", newLogger(cmd, os.Stderr))
			if !ok {
				return fmt.Errorf("the script executor is not built in")
			}
			if c, ok := ex.(io.Closer); ok {
				defer c.Close()
			}
			lib, _, done, err := openSkills(cmd, ex)
			if err != nil {
				return err
			}
			defer done()
			sk, err := lookupSkill(lib, args[0])
			if err != nil {
				return err
			}
			req := skills.RunRequest{Skill: sk.ID, Script: args[1], Args: scriptArgs(args[2:])}
			if in, _ := cmd.Flags().GetString("input"); in != "" {
				if !json.Valid([]byte(in)) {
					return fmt.Errorf("--input is not JSON: %s", in)
				}
				req.Input = json.RawMessage(in)
			} else if text, ok, err := pipedText(cmd.InOrStdin()); err != nil {
				return fmt.Errorf("read stdin: %w", err)
			} else if ok {
				req.Input = mustJSON(text)
			}
			raw, err := lib.RunScript(cmd.Context(), req, printCall{cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				fmt.Fprintln(cmd.OutOrStdout(), string(raw))
				return nil
			}
			text, isErr := resultOf(raw)
			fmt.Fprintln(cmd.OutOrStdout(), strings.TrimRight(text, "\n"))
			if isErr {
				return fmt.Errorf("the script failed")
			}
			return nil
		},
	}
	cmd.Flags().String("input", "", "JSON the script reads on stdin as {\"input\": ...} (default: text piped on this command's stdin, as a string)")
	cmd.Flags().Bool("json", false, "print the CallToolResult JSON")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// pipedText reads what is piped or redirected to in (a pipe or a file,
// not a terminal nor /dev/null): the text a script gets as its input, as
// run_skill_script's input argument gives it. ok is false when nothing
// was piped.
func pipedText(in io.Reader) (string, bool, error) {
	if f, isFile := in.(*os.File); isFile {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&os.ModeNamedPipe == 0 && !fi.Mode().IsRegular() {
			return "", false, nil
		}
	}
	b, err := io.ReadAll(in)
	if err != nil {
		return "", false, err
	}
	return string(b), len(b) > 0, nil
}

// scriptArgs are a script's arguments from the command line: a leading
// "--" (which cobra leaves in place once it stops parsing flags at SKILL)
// is dropped, and an argument naming a file or folder that exists
// relative to the working folder becomes its absolute path, since the
// script runs in its skill's folder.
func scriptArgs(in []string) []string {
	if len(in) > 0 && in[0] == "--" {
		in = in[1:]
	}
	out := make([]string, len(in))
	for i, a := range in {
		out[i] = a
		if a == "" || strings.HasPrefix(a, "-") || filepath.IsAbs(a) {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			if abs, err := filepath.Abs(a); err == nil {
				out[i] = abs
			}
		}
	}
	return out
}

func newSkillsValidateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "validate [DIR...]",
		Example: `  skillgate skills validate
  skillgate skills validate examples/skills
  skillgate skills validate examples/skills --json`,
		Short: "Check skills: frontmatter, script policies, tool folders, pipelines, requires",
		Long: `Checks skills as the gateway serves them: SKILL.md frontmatter, script
policies naming files, each tool folder's tool.yaml, each pipelines/ file
(compiled, with the skill's own tools known), reserved and clashing names,
and requires. A DIR is a skills folder or one skill's folder; without one,
the config's skills are checked, requires against its servers and services.

Problems and the summary go to stderr, and nothing to stdout. --json prints
{"ok", "errors", "warnings", "problems": [...], "skills": [...]} on stdout
instead, and nothing on stderr: each problem with file, line, column, field,
message, severity and source, as "skillgate validate" prints them.

Exit status: 0 when there are no errors (warnings do not fail it), 1 when
there are.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				_ = cmd.Flags().Set("dir", strings.Join(args, ","))
			}
			lib, cfg, done, err := openSkills(cmd, nil)
			if err != nil {
				return err
			}
			defer done()
			dirs, _ := cmd.Flags().GetStringSlice("dir")
			cfgPath, _ := cmd.Flags().GetString("config")
			probs := gateway.CheckSkills(cfg, lib, len(dirs) == 0 || cfgPath != "")
			snap := lib.Snapshot()
			if len(snap.Skills()) == 0 && len(probs) == 0 {
				probs = append(probs, skills.Problem{Path: strings.Join(dirs, ", "),
					Msg: "no skills found; a skill is a folder with a SKILL.md: give a folder of skills (DIR/<skill>/SKILL.md) or one skill's folder"})
			}
			problems := make([]validateProblem, 0, len(probs))
			errs, warns := 0, 0
			for _, p := range probs {
				if p.Warning {
					warns++
				} else {
					errs++
				}
				problems = append(problems, skillProblemOf(p, "skill"))
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				ids := []string{}
				for _, sk := range snap.Skills() {
					ids = append(ids, sk.ID)
				}
				if err := printJSON(cmd.OutOrStdout(), problemEnvelope(problems, map[string]any{"skills": ids})); err != nil {
					return err
				}
			} else {
				w := cmd.ErrOrStderr()
				for _, p := range probs {
					fmt.Fprintln(w, p)
				}
				fmt.Fprintf(w, "%s, %s, %s\n", counted(len(snap.Skills()), "skill"), counted(errs, "error"), counted(warns, "warning"))
			}
			if errs > 0 {
				return exitError(1) // the problems and their count are told
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "print the skills and every problem as JSON on stdout")
	return cmd
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// resultOf returns a CallToolResult's text and isError.
func resultOf(raw json.RawMessage) (string, bool) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String(), r.IsError
}

// printCall prints a script's log lines and progress to w.
type printCall struct{ w io.Writer }

func (p printCall) Progress(pr sdk.Progress) error {
	fmt.Fprintf(p.w, "progress %v/%v %s\n", pr.Progress, pr.Total, pr.Message)
	return nil
}

func (p printCall) Notify(n sdk.Notification) error {
	var m struct {
		Data any `json:"data"`
	}
	_ = json.Unmarshal(n.Params, &m)
	fmt.Fprintln(p.w, m.Data)
	return nil
}

func (p printCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("no client to ask from the command line")
}

func (p printCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("skill scripts cannot call tools from the command line")
}

// counted is "1 skill" or "n skills".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
