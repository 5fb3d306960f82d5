package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

func TestSkillsCLI(t *testing.T) {
	ex := "../../examples/skills"
	out, _, err := runCLI(t, "skills", "ls", "--dir", ex, "csv")
	if err != nil || !strings.Contains(strings.Split(out, "\n")[1], "csv-insights") {
		t.Errorf("ls: %v\n%s", err, out)
	}
	if out, _, err = runCLI(t, "skills", "validate", ex); err != nil || !strings.Contains(out, "5 skills, 0 errors") {
		t.Errorf("validate: %v\n%s", err, out)
	}
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "x"), 0o755)
	os.WriteFile(filepath.Join(bad, "x/SKILL.md"), []byte("---\nname: x\n---\n"), 0o644)
	if out, _, err = runCLI(t, "skills", "validate", bad); err == nil || !strings.Contains(out, "description: missing") {
		t.Errorf("validate bad: %v\n%s", err, out)
	}
	if out, _, err = runCLI(t, "skills", "show", "--dir", ex, "incident-review", "--section", "impact"); err != nil || !strings.HasPrefix(out, "## Impact") {
		t.Errorf("show: %v\n%s", err, out)
	}
	_, err = exec.LookPath("python3")
	testenv.Require(t, "python3", err == nil, "install python3 (scripts/test-deps.sh runs on Debian with it)")
	csv := filepath.Join(t.TempDir(), "a.csv")
	os.WriteFile(csv, []byte("n\n1\n2\n"), 0o644)
	if out, _, err = runCLI(t, "skills", "run", "--dir", ex, "csv-insights", "profile.py", csv, "--top", "1"); err != nil || !strings.Contains(out, `"rows":2`) {
		t.Errorf("run: %v\n%s", err, out)
	}
	if _, _, err = runCLI(t, "skills", "run", "--dir", ex, "log-triage", "errors.py", "/etc/passwd"); err == nil || !strings.Contains(err.Error(), "denied by hook pre.py") {
		t.Errorf("run denied: %v", err)
	}
}
