package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/gateway/toolstore"
	"github.com/skillgate/skillgate/internal/oneline"
)

// addToolStoreCmds adds the commands that work on the tool folders of the
// first tools dir directly, gateway or not: a running gateway picks the
// result up within a second.
func addToolStoreCmds(tools *cobra.Command) {
	var dir string
	var asJSON bool
	store := func(cmd *cobra.Command) (*toolstore.Store, error) {
		if dir != "" {
			return toolstore.New(dir), nil
		}
		cfg, err := loadConfig(cmd)
		if err != nil {
			return nil, err
		}
		if len(cfg.Tools.Dirs) == 0 {
			return nil, fmt.Errorf("%s has no tools dir; add tools: {dirs: [./tools]} or pass --dir", cfg.Source)
		}
		return toolstore.New(cfg.Tools.Dirs[0]), nil
	}
	versions := &cobra.Command{
		Use: "versions NAME",
		Example: `  skillgate tools versions slugify
  skillgate tools versions slugify --dir examples/tools --json`,
		Short: "List a tool folder's versions (kept by every update, delete and rollback)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := store(cmd)
			if err != nil {
				return err
			}
			vs, err := st.Versions(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(vs)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tWRITTEN\tLIVE\tDESCRIPTION")
			for _, v := range vs {
				live := ""
				if v.Live {
					live = "live"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.N, v.Time.Format("2006-01-02 15:04:05"), live, oneline.Cut(v.Description, 60))
			}
			return tw.Flush()
		},
	}
	versions.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rollback := &cobra.Command{
		Use: "rollback NAME [VERSION]",
		Example: `  skillgate tools rollback slugify      # the version before the live one
  skillgate tools rollback slugify 2 --dir ./tools`,
		Short: "Make an earlier version of a tool folder live again (default: the one before the live one)",
		Long: `Copy a kept version back as the tool's folder. The live folder is kept as a
version first, so a rollback can be rolled back. A deleted tool is restored.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := store(cmd)
			if err != nil {
				return err
			}
			n := 0
			if len(args) == 2 {
				if n, err = strconv.Atoi(args[1]); err != nil || n < 1 {
					return fmt.Errorf("version %q: give a version number from `skillgate tools versions %s`", args[1], args[0])
				}
			}
			v, err := st.Rollback(cmd.Context(), args[0], n)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is live again as version %d (%s)\n", args[0], v.N, v.Dir)
			return nil
		},
	}
	del := &cobra.Command{
		Use: "delete NAME",
		Example: `  skillgate tools delete slugify
  skillgate tools delete slugify --dir ./tools`,
		Short: "Remove a tool folder, keeping it as a version that rollback restores",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := store(cmd)
			if err != nil {
				return err
			}
			v, err := st.Delete(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s deleted; kept as version %d (skillgate tools rollback %s)\n", args[0], v.N, args[0])
			return nil
		},
	}
	for _, c := range []*cobra.Command{versions, rollback, del} {
		c.Flags().StringVar(&dir, "dir", "", "tools dir to work on (default: the config's first tools.dirs entry)")
		tools.AddCommand(c)
	}
}
