package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/skills"
	"github.com/skillgate/skillgate/skills/gitsource"
)

// isolateHome points HOME and the XDG state and cache homes of the
// commands a test runs in process at folders of the test, so that the
// state folders scripts get are not left in the user's home; it returns
// where skill scripts' state goes.
func isolateHome(t *testing.T) string {
	t.Helper()
	home, state := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	return filepath.Join(state, "skillgate", "skills")
}

func TestSkillsCLI(t *testing.T) {
	isolateHome(t)
	ex := "../../examples/skills"
	out, _, err := runCLI(t, "skills", "ls", "--dir", ex, "csv")
	if err != nil || !strings.Contains(strings.Split(out, "\n")[1], "csv-insights") {
		t.Errorf("ls: %v\n%s", err, out)
	}
	if _, out, err = runCLI(t, "skills", "validate", ex); err != nil || !strings.Contains(out, "5 skills, 0 errors") {
		t.Errorf("validate: %v\n%s", err, out)
	}
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "x"), 0o755)
	os.WriteFile(filepath.Join(bad, "x/SKILL.md"), []byte("---\nname: x\n---\n"), 0o644)
	if _, out, err = runCLI(t, "skills", "validate", bad); err == nil || !strings.Contains(out, "description: missing") {
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
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	body := "skills:\n  repos:\n    - {name: team, url: " + repo + "}\n    - {name: later, url: " + filepath.Join(repo, "nope") + "}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	parsed, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := skills.Open(t.Context(), skills.Options{NoWatch: true, Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Checked out the way the gateway of this config does, in its folder.
	mgr, err := gitsource.New(t.Context(), gateway.SkillReposDirFor(parsed), lib)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.Add(t.Context(), gitsource.Repo{Name: "team", URL: repo}); err != nil {
		t.Fatal(err)
	}
	mgr.Close()
	lib.Close()
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

// TestSkillsCLIAudit: what users of the skills commands ran into. run
// drops a -- after the script, passes a data file named relative to the
// working folder as an absolute path and tells the script the output
// budget; validate takes one skill's folder, counts each line it prints,
// names paths relative to the working folder, compiles pipelines, and
// checks requires against the config; ls --json says [] for no problems;
// show and validate speak JSON; an unknown skill points to skills ls;
// problems are printed once, not logged too.
func TestSkillsCLIAudit(t *testing.T) {
	_, err := exec.LookPath("bash")
	testenv.Require(t, "bash", err == nil, "install bash")
	state := isolateHome(t)
	base := t.TempDir()
	write := func(p, c string) {
		t.Helper()
		p = filepath.Join(base, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/hello/SKILL.md", "---\nname: hello\ndescription: Say hello with ünïcödé ✓ characters, in a description long enough to be cut by the listing of skills.\n---\n# Hello\n")
	write("skills/hello/scripts/hi.sh", `echo "args=$* budget=$SKILLGATE_OUTPUT_BUDGET state=$SKILLGATE_STATE_DIR"; head -1 "$1"`+"\n")
	write("data.csv", "first,line\n")
	write("bad/t/SKILL.md", "---\nname: t\ndescription: d\n---\n")
	write("bad/t/tools/x/tool.yaml", "name: x\nruntime: pythn\nentry: nope.py\nbogus: 1\n")
	write("bad/w/SKILL.md", "---\nname: w\ndescription: Weekly.\nrequires: {servers: [nosuchserver], services: [nosvc]}\n---\n")
	write("bad/w/tools/greet/tool.yaml", "name: greet\ndescription: Greet.\nruntime: bash\nentry: greet.sh\n")
	write("bad/w/tools/greet/greet.sh", "echo hi\n")
	write("bad/w/pipelines/report.yaml", "description: Report.\nsteps:\n  - {id: a, tool: w__greet}\n  - {id: b, tool: w__gret}\n")
	write("skillgate.yaml", "skills: {dirs: [bad]}\n")
	t.Chdir(base)

	out, errOut, err := runCLI(t, "skills", "run", "--dir", "skills", "hello", "hi.sh", "--", "data.csv", "--top", "5")
	if err != nil || !strings.Contains(out, "args="+filepath.Join(base, "data.csv")+" --top 5 budget=80000") || !strings.Contains(out, "first,line") {
		t.Errorf("run: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "state="+state+string(filepath.Separator)) {
		t.Errorf("run: the script's state folder is not under the test's own state home %s:\n%s", state, out)
	}
	if _, out, err = runCLI(t, "skills", "validate", "skills/hello"); err != nil || !strings.Contains(out, "1 skill, 0 errors") {
		t.Errorf("validate of one skill's folder: %v\n%s", err, out)
	}
	if _, out, err = runCLI(t, "skills", "validate", t.TempDir()); err == nil || !strings.Contains(out, "no skills found") {
		t.Errorf("validate of an empty folder: %v\n%s", err, out)
	}
	errOut, out, err = runCLI(t, "skills", "validate", "-c", "skillgate.yaml")
	for _, want := range []string{
		"bad/t/tools/x/tool.yaml:2: runtime:",
		"bad/t/tools/x/tool.yaml:3: entry: \"nope.py\" does not exist",
		"bad/t/tools/x/tool.yaml:4: unknown key \"bogus\"",
		"bad/t/tools/x/tool.yaml: description: missing",
		"bad/w/pipelines/report.yaml:4: ",
		"w__gret",
		"bad/w/SKILL.md: warning: requires.servers: server nosuchserver is not in the config",
		"bad/w/SKILL.md: warning: requires.services: service nosvc is not in the config",
		"2 skills, 5 errors, 2 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate lacks %q:\n%s", want, out)
		}
	}
	if err == nil || errOut != "" || strings.Contains(out, "WARN") || strings.Contains(out, "w__greet") {
		t.Errorf("validate: %v\n%s\n%s", err, out, errOut)
	}
	out, _, _ = runCLI(t, "skills", "validate", "bad", "--json")
	var v struct {
		Problems []validateProblem `json:"problems"`
		Errors   int               `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Errors != 5 || len(v.Problems) != 5 {
		t.Errorf("validate --json: %v %+v\n%s", err, v, out)
	}
	out, _, err = runCLI(t, "skills", "ls", "--dir", "skills", "--json")
	if err != nil || !strings.Contains(out, `"problems": []`) {
		t.Errorf("ls --json: %v\n%s", err, out)
	}
	out, _, _ = runCLI(t, "skills", "ls", "--dir", "skills")
	if !utf8.ValidString(out) || !strings.Contains(out, "…") {
		t.Errorf("ls cut a character: %q", out)
	}
	out, _, err = runCLI(t, "skills", "show", "--dir", "skills", "hello", "--json")
	if err != nil || !strings.Contains(out, `"instructions": "# Hello\n"`) {
		t.Errorf("show --json: %v\n%s", err, out)
	}
	if _, _, err = runCLI(t, "skills", "show", "--dir", "skills", "nope"); err == nil || !strings.Contains(err.Error(), "skillgate skills ls") || strings.Contains(err.Error(), "find_skills") {
		t.Errorf("show of an unknown skill: %v", err)
	}
}
