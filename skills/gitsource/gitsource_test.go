package gitsource

import (
	"context"
	"fmt"
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
