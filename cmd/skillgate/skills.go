package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills"
	"github.com/skillgate/skillgate/skills/gitsource"
)

func newSkillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List, show, run and validate skills (SKILL.md folders)",
		Long: `Skills are folders with a SKILL.md (docs/SKILLS.md). These commands work on
the skills dirs of the config (the built-in default has examples/skills), or
on the folders given with --dir:

  skillgate skills ls
  skillgate skills show csv-insights --section "Read the profile"
  skillgate skills run csv-insights profile.py data.csv --top 5
  skillgate skills validate ./skills`,
	}
	cmd.PersistentFlags().StringSlice("dir", nil, "skills folder (repeatable; default: the config's skills dirs)")
	cmd.AddCommand(newSkillsLsCmd(), newSkillsShowCmd(), newSkillsRunCmd(), newSkillsValidateCmd())
	return cmd
}

// openSkills opens the library of --dir, or of the config's skills dirs
// plus the skill repositories the gateway has checked out (as it serves
// them: the config's and those added through @skill), without fetching.
func openSkills(cmd *cobra.Command, ex sdk.Executor) (*skills.Library, error) {
	dirs, _ := cmd.Flags().GetStringSlice("dir")
	var repos []*config.SkillRepo
	if len(dirs) == 0 {
		cfg, err := loadConfig(cmd)
		if err != nil {
			return nil, err
		}
		dirs, repos = cfg.Skills.Dirs, cfg.Skills.Repos
	}
	reposDir := gateway.SkillReposDir()
	_, err := os.Stat(filepath.Join(reposDir, "repos.json"))
	haveRepos := err == nil
	if len(dirs) == 0 && len(repos) == 0 && !haveRepos {
		return nil, fmt.Errorf("no skills folders: give --dir, or set skills.dirs or skills.repos in the config")
	}
	var hooks []string
	for _, d := range dirs {
		if fi, err := os.Stat(d + "/_hooks"); err == nil && fi.IsDir() {
			hooks = append(hooks, d+"/_hooks")
		}
	}
	lib, err := skills.Open(cmd.Context(), skills.Options{Dirs: dirs, HooksDirs: hooks, Executor: ex, NoWatch: true, Interval: -1,
		Logger: newLogger(cmd, os.Stderr)})
	if err != nil {
		return nil, err
	}
	if flagDirs, _ := cmd.Flags().GetStringSlice("dir"); len(flagDirs) > 0 {
		return lib, nil
	}
	fetched := map[string]bool{}
	if haveRepos {
		// gitsource.New adds what is checked out, at its pinned commits;
		// it never fetches.
		mgr, err := gitsource.New(cmd.Context(), reposDir, lib)
		if err != nil {
			_ = lib.Close()
			return nil, fmt.Errorf("skill repositories in %s: %w", reposDir, err)
		}
		for _, r := range mgr.List() {
			fetched[r.Name] = true
		}
	}
	for _, r := range repos {
		if !fetched[r.Name] {
			fmt.Fprintf(cmd.ErrOrStderr(), "skillgate: skill repository %q (%s) is not fetched yet; start the gateway once (skillgate run) to fetch it\n", r.Name, r.URL)
		}
	}
	return lib, nil
}

func newSkillsLsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls [query]",
		Short: "List the skills (best match first with a query)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := openSkills(cmd, nil)
			if err != nil {
				return err
			}
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
				return writeSkillsJSON(out, map[string]any{"skills": rows, "problems": snap.Problems()})
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SKILL\tVERSION\tSCRIPTS\tSOURCE\tDESCRIPTION")
			for _, m := range ms {
				s := m.Skill
				d := s.Meta.Description
				if len(d) > 70 {
					d = d[:67] + "..."
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.Meta.Version, len(s.Scripts), s.Source, d)
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

func writeSkillsJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newSkillsShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show SKILL",
		Short: "Print a skill's instructions (or one section) and what it brings",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := openSkills(cmd, nil)
			if err != nil {
				return err
			}
			section, _ := cmd.Flags().GetString("section")
			raw, err := skills.NewServer(lib).CallTool(cmd.Context(), skills.ToolLoad, mustJSON(map[string]string{"skill": args[0], "section": section}), nil)
			if err != nil {
				return err
			}
			text, isErr := resultOf(raw)
			if isErr {
				return fmt.Errorf("%s", text)
			}
			fmt.Fprint(cmd.OutOrStdout(), text)
			return nil
		},
	}
	cmd.Flags().String("section", "", "only this heading's section")
	return cmd
}

func newSkillsRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run SKILL SCRIPT [ARGS...]",
		Short: "Run a skill's script (with its policy and hooks) and print its output",
		Long: `Runs a file of the skill's scripts/ folder as the gateway would: through the
script executor (in process here), with the skill's timeouts and hooks.
Arguments after the script are passed to it; put them after -- when they
start with a dash.`,
		Args:               cobra.MinimumNArgs(2),
		DisableFlagParsing: false,
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, ok := builtin.New("script", newLogger(cmd, os.Stderr))
			if !ok {
				return fmt.Errorf("the script executor is not built in")
			}
			if c, ok := ex.(io.Closer); ok {
				defer c.Close()
			}
			lib, err := openSkills(cmd, ex)
			if err != nil {
				return err
			}
			defer lib.Close()
			req := skills.RunRequest{Skill: args[0], Script: args[1], Args: args[2:]}
			if in, _ := cmd.Flags().GetString("input"); in != "" {
				if !json.Valid([]byte(in)) {
					return fmt.Errorf("--input is not JSON: %s", in)
				}
				req.Input = json.RawMessage(in)
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
	cmd.Flags().String("input", "", "JSON the script reads on stdin as {\"input\": ...}")
	cmd.Flags().Bool("json", false, "print the CallToolResult JSON")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func newSkillsValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate [DIR...]",
		Short: "Check skills folders: frontmatter, script policies, tool folders, requires",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				_ = cmd.Flags().Set("dir", strings.Join(args, ","))
			}
			lib, err := openSkills(cmd, nil)
			if err != nil {
				return err
			}
			snap := lib.Snapshot()
			errs, warns := 0, 0
			report := func(p skills.Problem) {
				if p.Warning {
					warns++
				} else {
					errs++
				}
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			for _, p := range snap.Problems() {
				report(p)
			}
			for _, sk := range snap.Skills() {
				for name := range sk.Meta.Scripts {
					if !slices.Contains(sk.Scripts, name) {
						report(skills.Problem{Path: sk.Dir + "/" + skills.FileName, Field: "scripts." + name, Msg: "no such file under scripts/"})
					}
				}
				for _, d := range sk.ToolDirs {
					if _, err := toolspec.Load(d); err != nil {
						report(skills.Problem{Path: d, Msg: err.Error()})
					}
				}
			}
			for _, p := range snap.Check(nil, nil) {
				report(p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d skills, %d errors, %d warnings\n", len(snap.Skills()), errs, warns)
			if errs > 0 {
				return fmt.Errorf("%d skill problems", errs)
			}
			return nil
		},
	}
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
