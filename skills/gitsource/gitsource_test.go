package gitsource

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/skillgate/skillgate/skills"
)

// repoWith makes a local repository (no network) and returns a function
// committing files to it.
func repoWith(t *testing.T) (string, func(files map[string]string, msg string) string) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	return dir, func(files map[string]string, msg string) string {
		for p, c := range files {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			mode := os.FileMode(0o644)
			if filepath.Ext(p) == ".sh" {
				mode = 0o755
			}
			if err := os.WriteFile(full, []byte(c), mode); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		h, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
}

func md(name string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: The %s skill.\nlicense: Complete terms in LICENSE.txt\n---\n# %s\n", name, name, name)
}

func ids(l *skills.Library) []string {
	var out []string
	for _, s := range l.Snapshot().Skills() {
		out = append(out, s.ID)
	}
	return out
}

// TestPublicLayout: a repository laid out like public skill collections
// (skills/<name>/SKILL.md, LICENSE.txt, scripts/, references/, a team-like
// folder of document skills) imports unchanged, pinned, updated and removed.
func TestPublicLayout(t *testing.T) {
	url, commit := repoWith(t)
	first := commit(map[string]string{
		"README.md":                                    "# Skills\n",
		"skills/webapp-testing/SKILL.md":               md("webapp-testing"),
		"skills/webapp-testing/LICENSE.txt":            "Apache",
		"skills/webapp-testing/scripts/with_server.sh": "echo hi\n",
		"skills/brand-guidelines/SKILL.md":             md("brand-guidelines"),
		"skills/brand-guidelines/references/colors.md": "# Colors\n",
		"skills/document-skills/pdf/SKILL.md":          md("pdf"),
		"skills/document-skills/xlsx/SKILL.md":         md("xlsx"),
		"template/SKILL.md":                            md("template-skill"),
	}, "first")
	commit(map[string]string{"skills/mcp-builder/SKILL.md": md("mcp-builder")}, "second")
	if _, err := git.PlainOpen(url); err != nil {
		t.Fatal(err)
	}

	lib := skills.New(skills.Options{NoWatch: true, Interval: -1})
	ctx := context.Background()
	root := t.TempDir()
	m, err := New(ctx, root, lib)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := m.Add(ctx, Repo{Name: "public", URL: url, Ref: first})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"brand-guidelines", "document-skills/pdf", "document-skills/xlsx", "webapp-testing"}
	if got := ids(lib); !reflect.DeepEqual(got, want) {
		t.Errorf("pinned: %v", got)
	}
	if len(lib.Snapshot().Problems()) != 0 {
		t.Errorf("problems: %v", lib.Snapshot().Problems())
	}
	sk, _ := lib.Lookup("webapp-testing")
	if sk.Source != "git "+url+"@"+first || repo.Commit != first {
		t.Errorf("source %q", sk.Source)
	}
	if fi, err := os.Stat(filepath.Join(sk.Dir, "scripts/with_server.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("executable bit lost: %v", err)
	}
	// Update to the branch head: the new skill appears, the old tree goes.
	if _, err := m.Update(ctx, "public", "master"); err != nil {
		t.Fatal(err)
	}
	if got := ids(lib); len(got) != 5 || got[3] != "mcp-builder" {
		t.Errorf("updated: %v", got)
	}
	if _, err := os.Stat(repo.Dir); !os.IsNotExist(err) {
		t.Errorf("old checkout kept: %v", err)
	}
	// A new manager over the same folder restores the pinned commit.
	lib2 := skills.New(skills.Options{NoWatch: true, Interval: -1})
	m2, err := New(ctx, root, lib2)
	if err != nil || len(ids(lib2)) != 5 || m2.List()[0].Ref != "master" {
		t.Errorf("restore: %v %v %+v", err, ids(lib2), m2.List())
	}
	if err := m.Remove(ctx, "public"); err != nil {
		t.Fatal(err)
	}
	if got := ids(lib); len(got) != 0 {
		t.Errorf("removed: %v", got)
	}
	if _, err := m.Update(ctx, "public", ""); err == nil {
		t.Error("update of a removed repository")
	}
}

// TestRootLayout: <name>/SKILL.md at the repository root, a tag as ref.
func TestRootLayout(t *testing.T) {
	url, commit := repoWith(t)
	h := commit(map[string]string{"one/SKILL.md": md("one"), "two/SKILL.md": md("two"), "README.md": "x"}, "c1")
	r, _ := git.PlainOpen(url)
	if _, err := r.CreateTag("v1", plumbing.NewHash(h), &git.CreateTagOptions{Message: "v1", Tagger: &object.Signature{Name: "t", Email: "t@e", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	commit(map[string]string{"three/SKILL.md": md("three")}, "c2")
	lib := skills.New(skills.Options{NoWatch: true, Interval: -1})
	m, _ := New(context.Background(), t.TempDir(), lib)
	repo, err := m.Add(context.Background(), Repo{Name: "root", URL: url, Ref: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(lib); !reflect.DeepEqual(got, []string{"one", "two"}) || repo.Commit != h {
		t.Errorf("%v %s", got, repo.Commit)
	}
	for _, bad := range []string{"no-such-branch", "0123456"} {
		if _, err := m.Update(context.Background(), "root", bad); err == nil {
			t.Errorf("ref %q accepted", bad)
		}
	}
	if _, err := m.Add(context.Background(), Repo{Name: "../x", URL: url}); err == nil {
		t.Error("bad name accepted")
	}
}

// TestLayouts: a repository with both a skills/ folder and skills at its
// root serves skills/ (auto) or the root, where skills/ is a team folder
// (root); layout skills refuses a
// repository without skills/.
func TestLayouts(t *testing.T) {
	url, commit := repoWith(t)
	commit(map[string]string{"skills/inner/SKILL.md": md("inner"), "outer/SKILL.md": md("outer")}, "c1")
	flat, commitFlat := repoWith(t)
	commitFlat(map[string]string{"only/SKILL.md": md("only")}, "c1")
	ctx := context.Background()
	lib := skills.New(skills.Options{NoWatch: true, Interval: -1})
	m, _ := New(ctx, t.TempDir(), lib)
	if _, err := m.Add(ctx, Repo{Name: "both", URL: url, Layout: LayoutAuto}); err != nil {
		t.Fatal(err)
	}
	if got := ids(lib); !reflect.DeepEqual(got, []string{"inner"}) {
		t.Errorf("auto: %v", got)
	}
	if err := m.Remove(ctx, "both"); err != nil {
		t.Fatal(err)
	}
	r, err := m.Add(ctx, Repo{Name: "both", URL: url, Layout: LayoutRoot, Origin: "config"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(lib); !reflect.DeepEqual(got, []string{"outer", "skills/inner"}) || r.Origin != "config" || r.Layout != LayoutRoot {
		t.Errorf("root: %v %+v", got, r)
	}
	if _, err := m.Add(ctx, Repo{Name: "flat", URL: flat, Layout: LayoutSkills}); err == nil || !strings.Contains(err.Error(), "no skills/ folder") {
		t.Errorf("layout skills without skills/: %v", err)
	}
	if _, err := m.Add(ctx, Repo{Name: "flat", URL: flat, Layout: "flat"}); err == nil {
		t.Error("unknown layout accepted")
	}
}

// TestSharedFolder: two managers over one folder (two gateways of one
// config, or a gateway and the CLI) take turns: neither drops the other's
// repositories from the state, and neither deletes a checkout the other
// serves, when it updates or removes a repository.
func TestSharedFolder(t *testing.T) {
	url, commit := repoWith(t)
	first := commit(map[string]string{"skills/alpha/SKILL.md": md("alpha")}, "c1")
	other, commitOther := repoWith(t)
	commitOther(map[string]string{"skills/beta/SKILL.md": md("beta")}, "c1")
	ctx := context.Background()
	root := t.TempDir()

	lib1 := skills.New(skills.Options{NoWatch: true, Interval: -1})
	m1, err := New(ctx, root, lib1)
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	if _, err := m1.Add(ctx, Repo{Name: "team", URL: url, Ref: first}); err != nil {
		t.Fatal(err)
	}
	lib2 := skills.New(skills.Options{NoWatch: true, Interval: -1})
	m2, err := New(ctx, root, lib2)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, err := m2.Add(ctx, Repo{Name: "other", URL: other}); err != nil {
		t.Fatal(err)
	}
	// m1 did not see m2's add; its next change keeps it in the state.
	second := commit(map[string]string{"skills/alpha/more.md": "more\n"}, "c2")
	if _, err := m1.Update(ctx, "team", second); err != nil {
		t.Fatal(err)
	}
	state, err := os.ReadFile(filepath.Join(root, "repos.json"))
	if err != nil || !strings.Contains(string(state), `"name": "other"`) || !strings.Contains(string(state), second) {
		t.Errorf("state lost a repository: %v\n%s", err, state)
	}
	// m2 still serves the first commit, which m1's update must not have
	// deleted; m2's removal must not delete m1's checkout.
	sk, err := lib2.Lookup("alpha")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sk.Dir, "SKILL.md")); err != nil {
		t.Errorf("the checkout m2 serves was deleted by m1's update: %v", err)
	}
	if err := m2.Remove(ctx, "team"); err != nil {
		t.Fatal(err)
	}
	sk1, _ := lib1.Lookup("alpha")
	if _, err := os.Stat(filepath.Join(sk1.Dir, "more.md")); err != nil {
		t.Errorf("the checkout m1 serves was deleted by m2's removal: %v", err)
	}
	// Once no one serves the old commit, a prune deletes it.
	m2.Close()
	if _, err := m1.Update(ctx, "team", second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sk.Dir); !os.IsNotExist(err) {
		t.Errorf("the old checkout outlived its last user: %v", err)
	}
}

// TestFailedAddLeavesNothing: an add that fails (no such repository, no
// such ref) leaves no folder in the manager's folder.
func TestFailedAddLeavesNothing(t *testing.T) {
	url, commit := repoWith(t)
	commit(map[string]string{"skills/alpha/SKILL.md": md("alpha")}, "c1")
	ctx := context.Background()
	root := t.TempDir()
	m, err := New(ctx, root, skills.New(skills.Options{NoWatch: true, Interval: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Add(ctx, Repo{Name: "nonexist", URL: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Fatal("a missing repository was added")
	}
	if _, err := m.Add(ctx, Repo{Name: "r3", URL: url, Ref: "no-such-ref"}); err == nil {
		t.Fatal("a missing ref was added")
	}
	for _, n := range []string{"nonexist", "r3"} {
		if _, err := os.Stat(filepath.Join(root, n)); !os.IsNotExist(err) {
			t.Errorf("a failed add left %s behind: %v", n, err)
		}
	}
}

// TestExportDropsLinksOut: the export leaves out symlinks that are
// absolute or climb out of the tree, and keeps those inside.
func TestExportDropsLinksOut(t *testing.T) {
	url, _ := repoWith(t)
	r, _ := git.PlainOpen(url)
	wt, _ := r.Worktree()
	writeLink := func(p, target string) {
		full := filepath.Join(url, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(url, "skills/s/references"), 0o755)
	os.WriteFile(filepath.Join(url, "skills/s/SKILL.md"), []byte(md("s")), 0o644)
	os.WriteFile(filepath.Join(url, "skills/s/references/guide.md"), []byte("# Guide\n"), 0o644)
	wt.Add("skills/s/SKILL.md")
	wt.Add("skills/s/references/guide.md")
	writeLink("skills/s/references/abs.md", "/etc/passwd")
	writeLink("skills/s/references/up.md", "../../../../../etc/passwd")
	writeLink("skills/s/references/in.md", "guide.md")
	if _, err := wt.Commit("links", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	lib := skills.New(skills.Options{NoWatch: true, Interval: -1})
	m, err := New(context.Background(), t.TempDir(), lib)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	repo, err := m.Add(context.Background(), Repo{Name: "links", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	refs := filepath.Join(repo.SkillsDir, "s/references")
	for _, n := range []string{"abs.md", "up.md"} {
		if _, err := os.Lstat(filepath.Join(refs, n)); !os.IsNotExist(err) {
			t.Errorf("%s was exported: %v", n, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(refs, "in.md")); err != nil || target != "guide.md" {
		t.Errorf("in.md: %q %v", target, err)
	}
}

// TestUpdateSwapsQuietly: an update swaps the commits' folders in one
// refresh, so the library never sees a skill defined twice.
func TestUpdateSwapsQuietly(t *testing.T) {
	url, commit := repoWith(t)
	commit(map[string]string{"skills/gitskill/SKILL.md": md("gitskill")}, "c1")
	var log strings.Builder
	lib := skills.New(skills.Options{NoWatch: true, Interval: -1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctx := context.Background()
	m, err := New(ctx, t.TempDir(), lib)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Add(ctx, Repo{Name: "g", URL: url, Ref: "master"}); err != nil {
		t.Fatal(err)
	}
	commit(map[string]string{"skills/gitskill/notes.md": "x\n"}, "c2")
	if _, err := m.Update(ctx, "g", ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "also defined") || len(lib.Snapshot().Problems()) > 0 {
		t.Errorf("the update was seen half-way:\n%s", log.String())
	}
}
