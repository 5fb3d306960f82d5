package main

import (
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExamples walks the command tree: every command a user
// can run shows an Examples block in its --help, and every group says in a
// paragraph what its subcommands work on. Cobra's own completion and help
// commands are left out.
func TestEveryCommandHasExamples(t *testing.T) {
	skip := map[string]bool{"skillgate completion": true, "skillgate help": true}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || skip[c.CommandPath()] {
			return
		}
		if c.Runnable() && !c.HasSubCommands() && c.Example == "" {
			t.Errorf("%s has no Example: give it one to three invocations a newcomer would type", c.CommandPath())
		}
		if c.HasSubCommands() && c.Parent() != nil && c.Long == "" {
			t.Errorf("%s is a group without a Long paragraph saying what its subcommands work on", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := newRootCmd()
	root.InitDefaultHelpCmd()
	walk(root)
}
