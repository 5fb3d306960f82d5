package gateway_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/config"
)

// gitRepo makes a local repository (no network) and returns its folder and
// a function committing files to it, returning the commit hash. Fetching
// from a local repository needs git's git-upload-pack, which go-git runs.
func gitRepo(t *testing.T) (string, func(files map[string]string) string) {
	t.Helper()
	if _, err := exec.LookPath("git-upload-pack"); err != nil {
		if _, err := exec.LookPath("git"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("git is missing")
			}
			t.Skip("git is missing")
		}
	}
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return dir, func(files map[string]string) string {
		for p, c := range files {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		h, err := wt.Commit("commit", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
}

func skillMD(name, desc string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\n\nFollow these steps.\n", name, desc, name)
}

// TestSkillRepos: a repository of the config (public layout,
// skills/<name>/SKILL.md, by file:// URL) is served at start; through
// mcp-go's client, @skill adds a second one (root layout, <name>/SKILL.md,
// a local path), lists both with their source and pinned commit, moves one
// to a new commit, and removes it; bad input is refused with the field.
func TestSkillRepos(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	public, commitPublic := gitRepo(t)
	first := commitPublic(map[string]string{
		"README.md":                            "# Skills\n",
		"skills/pdf-forms/SKILL.md":            skillMD("pdf-forms", "Fill PDF forms field by field."),
		"skills/pdf-forms/references/forms.md": "# Forms\n",
		"skills/brand-voice/SKILL.md":          skillMD("brand-voice", "Write in the brand's voice."),
	})
	flat, commitFlat := gitRepo(t)
	flatFirst := commitFlat(map[string]string{"sql-review/SKILL.md": skillMD("sql-review", "Review SQL migrations for locks.")})

	r := startGateway(t, fmt.Sprintf("skills:\n  repos:\n    - {name: public, url: 'file://%s', ref: %s}\nadmin: {writes: all}\n", public, first[:10]), nil)
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)

	if got := resultText(gc.call(t, ctx, "find_skills", map[string]any{"query": "pdf forms"}, nil)); !strings.HasPrefix(got, "pdf-forms: Fill PDF forms") {
		t.Errorf("find_skills after start: %q", got)
	}
	if got := resultText(gc.call(t, ctx, "read_skill_file", map[string]any{"skill": "pdf-forms", "path": "references/forms.md"}, nil)); got != "# Forms\n" {
		t.Errorf("read_skill_file: %q", got)
	}

	if res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"@skill"}}, nil); res.IsError {
		t.Fatalf("activate @skill: %s", resultText(res))
	}
	res := gc.call(t, ctx, "skill__repo_add", map[string]any{"url": flat}, nil)
	if res.IsError || !strings.Contains(resultText(res), "added "+filepath.Base(flat)) || !strings.Contains(resultText(res), "1 skills: sql-review") {
		t.Fatalf("repo_add: %s", resultText(res))
	}
	if got := resultText(gc.call(t, ctx, "load_skill", map[string]any{"skill": "sql-review"}, nil)); !strings.HasPrefix(got, "# sql-review") {
		t.Errorf("load_skill of an added repository: %q", got)
	}

	list := gc.call(t, ctx, "skill__repo_list", nil, nil)
	text := resultText(list)
	for _, want := range []string{
		"public: file://" + public + " " + first[:10] + " -> " + first[:12] + " (auto layout, added by the config), 2 skills",
		filepath.Base(flat) + ": " + flat + " HEAD -> " + flatFirst[:12] + " (auto layout, added by a client), 1 skills",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("repo_list lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(fmt.Sprint(list.StructuredContent), "git file://"+public+"@"+first) {
		t.Errorf("repo_list structured content lacks the source: %v", list.StructuredContent)
	}

	second := commitFlat(map[string]string{"k8s-debug/SKILL.md": skillMD("k8s-debug", "Debug a crashing pod.")})
	res = gc.call(t, ctx, "skill__repo_update", map[string]any{"name": filepath.Base(flat)}, nil)
	if res.IsError || !strings.Contains(resultText(res), second[:12]) || !strings.Contains(resultText(res), "2 skills") {
		t.Errorf("repo_update: %s", resultText(res))
	}
	if got := resultText(gc.call(t, ctx, "find_skills", map[string]any{"query": "crashing pod"}, nil)); !strings.HasPrefix(got, "k8s-debug:") {
		t.Errorf("find_skills after update: %q", got)
	}

	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": "ftp://example.com/x.git"}, `unknown scheme "ftp"`},
		{map[string]any{"url": flat, "name": "../x"}, "name:"},
		{map[string]any{"url": flat, "layout": "flat"}, "layout: unknown value"},
		{map[string]any{"url": flat, "name": "public"}, "already comes from"},
		{map[string]any{"url": filepath.Join(t.TempDir(), "missing")}, "fetch"},
	} {
		if res := gc.call(t, ctx, "skill__repo_add", bad.args, nil); !res.IsError || !strings.Contains(resultText(res), bad.want) {
			t.Errorf("repo_add %v: %s (want an error with %q)", bad.args, resultText(res), bad.want)
		}
	}
	if res := gc.call(t, ctx, "skill__repo_remove", map[string]any{"name": "nope"}, nil); !res.IsError || !strings.Contains(resultText(res), "the repositories are "+filepath.Base(flat)+", public") {
		t.Errorf("repo_remove of an unknown repository: %s", resultText(res))
	}

	if res := gc.call(t, ctx, "skill__repo_remove", map[string]any{"name": filepath.Base(flat)}, nil); res.IsError {
		t.Fatalf("repo_remove: %s", resultText(res))
	}
	if got := resultText(gc.call(t, ctx, "load_skill", map[string]any{"skill": "sql-review"}, nil)); !strings.Contains(got, "unknown skill") && !strings.Contains(got, "no skill") {
		t.Errorf("load_skill after repo_remove: %q", got)
	}
}

// TestSkillsReload: skills.context_window and result_share reach scripts
// as SKILLGATE_OUTPUT_BUDGET, hooks_dirs hooks run around every script,
// and a reload applies new values, a new skills dir and the removal of a
// config repository without a restart.
func TestSkillsReload(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	base := t.TempDir()
	write := func(p, c string) {
		t.Helper()
		p = filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/budget/SKILL.md", skillMD("budget", "Print the output budget."))
	write("skills/budget/scripts/show.sh", `echo "budget=$SKILLGATE_OUTPUT_BUDGET hook=$FROM_HOOK"`+"\n")
	write("hooks/pre.sh", `echo '{"env": {"FROM_HOOK": "yes"}}'`+"\n")
	write("more/extra/SKILL.md", skillMD("extra", "An extra skill."))
	repo, commit := gitRepo(t)
	commit(map[string]string{"remote-one/SKILL.md": skillMD("remote-one", "A skill from git.")})

	yaml := func(window int, dirs string, repos bool) string {
		s := fmt.Sprintf("skills:\n  dirs: [%s]\n  hooks_dirs: [hooks]\n  context_window: %d\n  result_share: 0.2\n", dirs, window)
		if repos {
			s += "  repos: [{url: " + repo + "}]\n"
		}
		return s
	}
	name := filepath.Join(base, "skillgate.yaml")
	r := startGatewayNamed(t, name, yaml(30000, "skills", true), nil)
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)
	run := func() string {
		return strings.TrimSpace(resultText(gc.call(t, ctx, "run_skill_script", map[string]any{"skill": "budget", "script": "show.sh"}, nil)))
	}
	if got := run(); got != "budget=24000 hook=yes" {
		t.Errorf("before reload: %q", got)
	}
	if got := resultText(gc.call(t, ctx, "find_skills", map[string]any{"query": "git"}, nil)); !strings.HasPrefix(got, "remote-one:") {
		t.Errorf("config repository: %q", got)
	}

	cfg, err := config.Parse(strings.NewReader(yaml(100000, "skills, more", false)), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != "budget=80000 hook=yes" {
		t.Errorf("after reload: %q", got)
	}
	if got := resultText(gc.call(t, ctx, "find_skills", nil, nil)); !strings.Contains(got, "extra:") || strings.Contains(got, "remote-one") {
		t.Errorf("skills after reload (extra added, remote-one removed): %q", got)
	}
}

// TestSkillReposPerConfig: gateways of two configs on one machine share
// the state folder but not their repositories: a second gateway without
// repositories (here the built-in default's way: none) leaves the first
// one's checkout and state alone. A relative url is kept absolute, so
// the first gateway restarted from another working folder serves its
// checkout without fetching (the source is gone), and a reload fetches a
// checkout that went missing again.
func TestSkillReposPerConfig(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	src, commit := gitRepo(t)
	commit(map[string]string{"skills/gitskill/SKILL.md": skillMD("gitskill", "A skill from git.")})
	a := t.TempDir()
	rel, err := filepath.Rel(a, src)
	if err != nil {
		t.Fatal(err)
	}
	cfgA := "skills:\n  repos: [{url: " + rel + ", ref: master}]\n"
	if err := os.WriteFile(filepath.Join(a, "a.yaml"), []byte(cfgA), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(a) // the config named relative to the working folder, as `skillgate run -c a.yaml` does
	ra := startGatewayNamed(t, "a.yaml", cfgA, nil)
	ra.waitReady(t)
	ctx := context.Background()
	gca := newGoClient(t, ctx, ra.url+"/mcp", mcp.ProtocolVersion20251125)
	find := func(gc *goClient) string {
		return resultText(gc.call(t, ctx, "find_skills", map[string]any{}, nil))
	}
	if got := find(gca); !strings.HasPrefix(got, "gitskill:") {
		t.Fatalf("A: %q", got)
	}

	b := t.TempDir()
	os.MkdirAll(filepath.Join(b, "skills"), 0o755)
	rb := startGatewayNamed(t, filepath.Join(b, "b.yaml"), "skills: {dirs: [skills]}\n", nil)
	rb.waitReady(t)
	if got := find(gca); !strings.HasPrefix(got, "gitskill:") {
		t.Errorf("A after B started: %q", got)
	}
	if res := gca.call(t, ctx, "load_skill", map[string]any{"skill": "gitskill"}, nil); res.IsError {
		t.Errorf("A's checkout after B started: %s", resultText(res))
	}
	if res := gca.call(t, ctx, "activate", map[string]any{"targets": []any{"@skill"}}, nil); res.IsError {
		t.Fatal(resultText(res))
	}
	if got := resultText(gca.call(t, ctx, "skill__repo_list", nil, nil)); !strings.Contains(got, ": "+src+" master") {
		t.Errorf("the relative url is not kept absolute: %s", got)
	}

	// Restarted from another folder with the source gone: no fetch.
	t.Chdir(b)
	moved := src + ".moved"
	if err := os.Rename(src, moved); err != nil {
		t.Fatal(err)
	}
	ra2 := startGatewayNamed(t, filepath.Join(a, "a.yaml"), cfgA, nil)
	ra2.waitReady(t)
	gca2 := newGoClient(t, ctx, ra2.url+"/mcp", mcp.ProtocolVersion20251125)
	if got := find(gca2); !strings.HasPrefix(got, "gitskill:") || strings.Contains(ra2.log.String(), "skill repository not served") {
		t.Errorf("restart from another folder: %q\n%s", got, ra2.log.String())
	}

	// A checkout deleted behind the gateway's back is fetched again on a
	// reload.
	os.Rename(moved, src)
	sk, err := ra2.gw.Skills().Lookup("gitskill")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(sk.Root); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(strings.NewReader(cfgA), filepath.Join(a, "a.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ra2.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if res := gca2.call(t, ctx, "load_skill", map[string]any{"skill": "gitskill"}, nil); res.IsError {
		t.Errorf("after the checkout went missing and a reload: %s", resultText(res))
	}
}
