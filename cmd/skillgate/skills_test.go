package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/skills"
	"github.com/skillgate/skillgate/skills/gitsource"
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

// TestSkillsCLIRepos: with no skills dirs, the skills commands read the
// repositories the gateway checked out (here checked out the way the
// gateway does, with gitsource), and name a config repository that was
// never fetched instead of fetching it.
func TestSkillsCLIRepos(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Require(t, "git", false, "install git (go-git fetches local repositories with git-upload-pack)")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	repo := t.TempDir()
	r, err := git.PlainInit(repo, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "skills", "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: alpha\ndescription: Reads alpha reports and sums them\n---\n# Alpha\n\nSteps.\n"
	if err := os.WriteFile(filepath.Join(repo, "skills", "alpha", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("skills/alpha/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit("alpha", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	lib, err := skills.Open(t.Context(), skills.Options{NoWatch: true, Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := gitsource.New(t.Context(), gateway.SkillReposDir(), lib)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.Add(t.Context(), gitsource.Repo{Name: "team", URL: repo}); err != nil {
		t.Fatal(err)
	}
	lib.Close()

	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	body := "skills:\n  repos:\n    - {name: team, url: " + repo + "}\n    - {name: later, url: " + filepath.Join(repo, "nope") + "}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCLI(t, "skills", "ls", "-c", cfg)
	if err != nil || !strings.Contains(out, "alpha") {
		t.Fatalf("ls: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(errOut, `skill repository "later"`) || !strings.Contains(errOut, "not fetched yet") || strings.Contains(errOut, `"team"`) {
		t.Errorf("stderr should name the unfetched repository only:\n%s", errOut)
	}
	if out, _, err = runCLI(t, "skills", "show", "-c", cfg, "alpha"); err != nil || !strings.Contains(out, "# Alpha") {
		t.Errorf("show: %v\n%s", err, out)
	}
}
