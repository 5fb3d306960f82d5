package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestSkillsRunStdinAndUnsetToken: `skills run` passes text piped on its
// stdin to the script as run_skill_script's input does ({"input": text}
// on the script's stdin), and `skills run` and `skills ls -c` start with
// a config whose auth.tokens names a variable that is not set: they
// serve no HTTP.
func TestSkillsRunStdinAndUnsetToken(t *testing.T) {
	_, err := exec.LookPath("python3")
	testenv.Require(t, "python3", err == nil, "install python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	base := t.TempDir()
	for p, c := range map[string]string{
		"skills/text-stats/SKILL.md":      "---\nname: text-stats\ndescription: Counts words.\n---\n# Text stats\n",
		"skills/text-stats/scripts/wc.py": "import json, sys\nreq = json.load(sys.stdin)\nprint('words=%d' % len((req.get('input') or '').split()))\n",
		"skillgate.yaml":                  "auth: {tokens: [\"${SKILLGATE_TEST_UNSET_TOKEN}\"]}\nskills: {dirs: [skills]}\n",
	} {
		os.MkdirAll(filepath.Join(base, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(base, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Unsetenv("SKILLGATE_TEST_UNSET_TOKEN")
	cfg := filepath.Join(base, "skillgate.yaml")

	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader("one two three\nfour\n"))
	cmd.SetArgs([]string{"skills", "run", "-c", cfg, "text-stats", "wc.py"})
	if err := cmd.ExecuteContext(context.Background()); err != nil || strings.TrimSpace(out.String()) != "words=4" {
		t.Errorf("skills run with text piped in: %v\n%s%s", err, out.String(), errOut.String())
	}
	if out, errOut, err := runCLI(t, "skills", "ls", "-c", cfg); err != nil || !strings.Contains(out, "text-stats") {
		t.Errorf("skills ls -c with auth.tokens unset: %v\n%s%s", err, out, errOut)
	}
}
