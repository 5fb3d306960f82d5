package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestProfilesWarnsOfUnmatchedNames: `skillgate profiles` (the real
// binary, the bundled tools) warns, with file:line, of each pinned:,
// include:, tools: and allow: entry that matches nothing served; `skillgate
// validate` of a profile that names a skill no skills dir holds fails at
// its line.
func TestProfilesWarnsOfUnmatchedNames(t *testing.T) {
	bin := buildSkillgate(t)
	root := testenv.RepoRoot(t)
	// Script tools only: the wasm ones may still be building (a cold
	// cache), and names are checked once every source is ready.
	tools := t.TempDir()
	for _, name := range []string{"word_count", "counter"} {
		if err := os.Symlink(filepath.Join(root, "examples", "tools", name), filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, fmt.Sprintf(`tools: {dirs: [%q]}
skills: {dirs: [%q]}
disclosure: progressive
pinned: [tools__word_count, tools__wordcount]
bundles:
  text: {include: ["tools__*", tools__nope]}
profiles:
  text:
    tools: ["tools__*", "text__*"]
    allow: ["*count*", "*zzz*"]
  csv:
    skills: [csv-insights, csv-insight]
`, tools, filepath.Join(root, "examples", "skills")))

	out, err := exec.Command(bin, "profiles", "-c", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("profiles: %v\n%s", err, out)
	}
	for _, want := range []string{
		`warning: ` + cfg + `:4:29: pinned[1]: "tools__wordcount" matches no tool`,
		`warning: ` + cfg + `:6:32: bundles.text.include[1]: "tools__nope" names no server, skill or tool`,
		`warning: ` + cfg + `:9:25: profiles.text.tools[1]: "text__*" matches no tool`,
		`warning: ` + cfg + `:10:24: profiles.text.allow[1]: "*zzz*" matches no tool`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("profiles output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(string(out), "warning: "+cfg); n != 4 {
		t.Errorf("%d warnings about the config, want 4:\n%s", n, out)
	}

	out, err = exec.Command(bin, "validate", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), cfg+`:12: profiles.csv.skills[1]: no skill "csv-insight" in the skills dirs`) ||
		strings.Contains(string(out), "names skills, but") {
		t.Errorf("validate: %v\n%s\nwant an error for csv-insight and no warning of the skills tools (the gateway serves them to csv)", err, out)
	}
}
