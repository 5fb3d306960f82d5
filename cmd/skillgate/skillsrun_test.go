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

// TestSkillsCommandsUnsetVars: the skills commands read only the skills
// section (and what it needs) of the config, so a ${VAR} not set in a
// pipeline or a server's env does not stop them; one not set in a skills
// setting is an error at its file:line, naming the setting.
func TestSkillsCommandsUnsetVars(t *testing.T) {
	isolateHome(t)
	base := t.TempDir()
	for p, c := range map[string]string{
		"skills/text-stats/SKILL.md": "---\nname: text-stats\ndescription: Counts words.\n---\n# Text stats\n",
		"skillgate.yaml": "servers:\n  notes: {command: node, env: {TOKEN: \"${SKILLGATE_TEST_UNSET_SRV}\"}}\n" +
			"pipelines: {dirs: [\"${SKILLGATE_TEST_UNSET_PIPE}/pipelines\"]}\n" +
			"skills: {dirs: [skills]}\n",
		"bad.yaml": "servers:\n  notes: {command: node, env: {TOKEN: \"${SKILLGATE_TEST_UNSET_SRV}\"}}\n" +
			"skills:\n  dirs: [skills, \"${SKILLGATE_TEST_UNSET_DIR}\"]\n",
	} {
		os.MkdirAll(filepath.Join(base, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(base, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"SKILLGATE_TEST_UNSET_SRV", "SKILLGATE_TEST_UNSET_PIPE", "SKILLGATE_TEST_UNSET_DIR"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	cfg := filepath.Join(base, "skillgate.yaml")
	if out, errOut, err := runCLI(t, "skills", "ls", "-c", cfg); err != nil || !strings.Contains(out, "text-stats") {
		t.Errorf("skills ls -c with a pipeline's and a server's variable unset: %v\n%s%s", err, out, errOut)
	}
	if _, errOut, err := runCLI(t, "skills", "validate", "-c", cfg); err != nil {
		t.Errorf("skills validate -c with a pipeline's and a server's variable unset: %v\n%s", err, errOut)
	}
	bad := filepath.Join(base, "bad.yaml")
	_, _, err := runCLI(t, "skills", "ls", "-c", bad)
	if err == nil || !strings.Contains(err.Error(), bad+":4:18: skills.dirs[1]: undefined variable ${SKILLGATE_TEST_UNSET_DIR}") || strings.Contains(err.Error(), "SKILLGATE_TEST_UNSET_SRV") {
		t.Errorf("skills ls -c with a skills dir's variable unset: %v, want that one error at %s:4:18", err, bad)
	}
}

// TestSkillsShowBrokenSkill: `skills show` of a broken skill, by the
// name its SKILL.md gives or by its folder, says what is broken and
// where, not that no skill has that name.
func TestSkillsShowBrokenSkill(t *testing.T) {
	isolateHome(t)
	dir := t.TempDir()
	md := filepath.Join(dir, "stats", "SKILL.md")
	os.MkdirAll(filepath.Dir(md), 0o755)
	if err := os.WriteFile(md, []byte("---\nname: text-stats\ndescription: Broken.\nexecution: {timeout: banana}\n---\n# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"text-stats", "stats"} {
		_, _, err := runCLI(t, "skills", "show", "--dir", dir, name)
		if err == nil || !strings.Contains(err.Error(), "is not served: "+md+":4:") || !strings.Contains(err.Error(), "banana") {
			t.Errorf("skills show %s of a broken skill: %v, want its own error at %s:4", name, err, md)
		}
	}
}
