package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDiscovery(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pdf/SKILL.md":                  skillMD("pdf", "Fill and merge PDF files.", "tags: [pdf, documents]\n"),
		"pdf/scripts/fill.py":           "print('x')\n",
		"pdf/scripts/lib/util.py":       "",
		"pdf/references/forms.md":       "# Forms\n",
		"pdf/hooks/pre.sh":              "exit 0\n",
		"pdf/tools/stamp/tool.yaml":     "name: stamp\n",
		"pdf/tools/notatool/readme.txt": "",
		"pdf/pipelines/p.yaml":          "",
		"acme/billing/SKILL.md":         skillMD("billing", "Bill customers the acme way."),
		"acme/refunds/SKILL.md":         skillMD("refunds", "Refund per acme policy."),
		"acme/notes/readme.md":          "not a skill",
		"other/refunds/SKILL.md":        skillMD("refunds", "Refunds for other."),
		"broken/SKILL.md":               "---\nname: broken\n",
		"nodesc/SKILL.md":               "---\nname: nodesc\n---\n",
		"renamed/SKILL.md":              skillMD("new-name", "A skill whose folder has another name."),
		".git/SKILL.md":                 skillMD("hidden", "never seen"),
		"loose.md":                      "not a folder",
		"acme/deep/er/SKILL.md":         skillMD("er", "two levels down is not scanned"),
		"zlinked/SKILL.md":              "->" + filepath.Join(dir, "pdf/SKILL.md"),
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	snap := l.Snapshot()
	want := []string{"acme/billing", "acme/refunds", "new-name", "other/refunds", "pdf"}
	if got := ids(snap); !reflect.DeepEqual(got, want) {
		// linked/SKILL.md is a symlink to pdf's: it is a second "pdf".
		t.Errorf("ids = %v, want %v", got, want)
	}
	var errs, warns []string
	for _, p := range snap.Problems() {
		if p.Warning {
			warns = append(warns, p.String())
		} else {
			errs = append(errs, p.String())
		}
	}
	all := strings.Join(errs, "\n")
	for _, want := range []string{"broken/SKILL.md:1: the frontmatter is not closed", "nodesc/SKILL.md:2: description: missing", "zlinked/SKILL.md: cannot read: it leads out of the skill folder"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if len(errs) != 3 {
		t.Errorf("problems:\n%s", all)
	}
	// acme/deep/er is too deep to be a skill, and is said to be.
	if w := strings.Join(warns, "\n"); len(warns) != 2 || !strings.Contains(w, "differs from its folder") || !strings.Contains(w, "acme/deep/er/SKILL.md: warning: not served: skills are read at most two levels down") {
		t.Errorf("warnings: %v", warns)
	}

	pdf, err := snap.Lookup("pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pdf.Scripts, []string{"fill.py", "lib/util.py"}) {
		t.Errorf("scripts = %v", pdf.Scripts)
	}
	if len(pdf.ToolDirs) != 1 || filepath.Base(pdf.ToolDirs[0]) != "stamp" || filepath.Base(pdf.PipelinesDir) != "pipelines" || !pdf.HasHooks() {
		t.Errorf("tools %v pipelines %q hooks %v", pdf.ToolDirs, pdf.PipelinesDir, pdf.HasHooks())
	}
	if pdf.Card() != "pdf: Fill and merge PDF files. [pdf, documents]" {
		t.Errorf("card = %q", pdf.Card())
	}
	if pdf.URI() != "skill://pdf/SKILL.md" {
		t.Errorf("uri = %q", pdf.URI())
	}
	if _, err := snap.Lookup("refunds"); !errors.Is(err, ErrAmbiguousSkill) || !strings.Contains(err.Error(), "acme/refunds, other/refunds") {
		t.Errorf("lookup refunds: %v", err)
	}
	if sk, err := snap.Lookup("billing"); err != nil || sk.ID != "acme/billing" || sk.Team != "acme" {
		t.Errorf("lookup billing: %v %v", sk, err)
	}
	if _, err := snap.Lookup(".."); !errors.Is(err, ErrUnknownSkill) {
		t.Errorf("lookup ..: %v", err)
	}
}

func TestRefresh(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a/SKILL.md":      skillMD("a", "First."),
		"team/b/SKILL.md": skillMD("b", "Second."),
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	ctx := context.Background()
	gen := l.Snapshot().Generation()
	if changed, err := l.Refresh(ctx); changed || err != nil {
		t.Fatalf("refresh of an unchanged tree: %v %v", changed, err)
	}
	a0, _ := l.Lookup("a")

	// Hot add, at the top and in a team folder.
	writeTree(t, dir, map[string]string{"c/SKILL.md": skillMD("c", "Third.")})
	writeTree(t, dir, map[string]string{"team/d/SKILL.md": skillMD("d", "Fourth.")})
	touch(t, dir)
	touch(t, filepath.Join(dir, "team"))
	if !l.Changed() {
		t.Fatal("adding skills is not seen")
	}
	if changed, err := l.Refresh(ctx); !changed || err != nil {
		t.Fatal(changed, err)
	}
	if got := ids(l.Snapshot()); !reflect.DeepEqual(got, []string{"a", "c", "team/b", "team/d"}) {
		t.Errorf("ids = %v", got)
	}
	if l.Snapshot().Generation() != gen+1 {
		t.Errorf("generation %d", l.Snapshot().Generation())
	}
	// The unchanged skill's frontmatter was reused.
	if a1, _ := l.Lookup("a"); !reflect.DeepEqual(a1.Meta, a0.Meta) || a1 == a0 {
		t.Errorf("a was not carried over")
	}

	// An edit in place is seen by its (mtime, size).
	writeTree(t, dir, map[string]string{"a/SKILL.md": skillMD("a", "First, edited.")})
	touch(t, filepath.Join(dir, "a/SKILL.md"))
	if changed, _ := l.Refresh(ctx); !changed {
		t.Fatal("edit not seen")
	}
	if a, _ := l.Lookup("a"); a.Meta.Description != "First, edited." {
		t.Errorf("description %q", a.Meta.Description)
	}
	// A broken edit drops that skill only and says why.
	writeTree(t, dir, map[string]string{"c/SKILL.md": "---\nname: c\n"})
	touch(t, filepath.Join(dir, "c/SKILL.md"))
	l.Refresh(ctx)
	if got := ids(l.Snapshot()); !reflect.DeepEqual(got, []string{"a", "team/b", "team/d"}) {
		t.Errorf("ids = %v", got)
	}
	if p := l.Snapshot().Problems(); len(p) != 1 || !strings.Contains(p[0].String(), "c/SKILL.md") {
		t.Errorf("problems = %v", p)
	}
	// Removal.
	os.RemoveAll(filepath.Join(dir, "team/b"))
	touch(t, filepath.Join(dir, "team"))
	l.Refresh(ctx)
	if got := ids(l.Snapshot()); !reflect.DeepEqual(got, []string{"a", "team/d"}) {
		t.Errorf("ids = %v", got)
	}
}

// TestUnchangedTreeAllocatesNothing: checking a tree of 200 skills for
// changes costs one stat per skill and no allocation.
func TestUnchangedTreeAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 200 {
		n := "s" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		files["team"+string(rune('a'+i%3))+"/"+n+"/SKILL.md"] = skillMD(n, "A skill.")
	}
	writeTree(t, dir, files)
	l := openLib(t, Options{Dirs: []string{dir}})
	if n := len(l.Snapshot().Skills()); n != 200 {
		t.Fatalf("%d skills", n)
	}
	if n := len(l.Snapshot().stamps); n != 205 {
		t.Errorf("%d stats per check, want 200 skills + 3 teams + 1 root + its _hooks", n)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if l.Changed() {
			t.Fatal("changed")
		}
	})
	if allocs != 0 {
		t.Errorf("an unchanged check allocates %v times", allocs)
	}
	allocs = testing.AllocsPerRun(20, func() {
		if changed, _ := l.Refresh(context.Background()); changed {
			t.Fatal("changed")
		}
	})
	if allocs != 0 {
		t.Errorf("an unchanged refresh allocates %v times", allocs)
	}
}

func TestRunWatches(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/SKILL.md": skillMD("a", "First.")})
	changes := make(chan *Snapshot, 16)
	l := New(Options{Dirs: []string{dir}, Interval: time.Hour, OnChange: func(s *Snapshot) { changes <- s }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-changes // the first scan
	writeTree(t, dir, map[string]string{"b/SKILL.md": skillMD("b", "Second.")})
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-changes:
			if slices.Contains(ids(s), "b") {
				return
			}
		case <-deadline:
			t.Fatalf("the watcher did not pick up b: %v", ids(l.Snapshot()))
		}
	}
}

func TestBodyAndSections(t *testing.T) {
	dir := t.TempDir()
	body := "# Guide\n\nIntro.\n\n## Setup\n\nInstall it.\n\n```sh\n# not a heading\n```\n\n### Details\n\nMore.\n\n## Usage\n\nRun it.\n"
	writeTree(t, dir, map[string]string{"g/SKILL.md": "---\nname: g\ndescription: A guide.\n---\n" + body})
	l := openLib(t, Options{Dirs: []string{dir}})
	sk, _ := l.Lookup("g")
	text, secs, err := l.Body(sk)
	if err != nil || text != body {
		t.Fatalf("body %q %v", text, err)
	}
	var titles []string
	for _, s := range secs {
		titles = append(titles, s.Title)
	}
	if !reflect.DeepEqual(titles, []string{"Guide", "Setup", "Details", "Usage"}) {
		t.Errorf("titles %v", titles)
	}
	for q, want := range map[string]string{
		"setup":    "## Setup\n\nInstall it.\n\n```sh\n# not a heading\n```\n\n### Details\n\nMore.\n\n",
		"## USAGE": "## Usage\n\nRun it.\n",
		"det":      "### Details\n\nMore.\n\n",
	} {
		if got, err := l.Section(sk, q); err != nil || got != want {
			t.Errorf("section %q = %q, %v", q, got, err)
		}
	}
	if _, err := l.Section(sk, "nope"); !errors.Is(err, ErrUnknownSection) || !strings.Contains(err.Error(), "Guide; Setup; Details; Usage") {
		t.Errorf("unknown section: %v", err)
	}
	// The cache is revalidated by (mtime, size).
	writeTree(t, dir, map[string]string{"g/SKILL.md": "---\nname: g\ndescription: A guide.\n---\nNew body.\n"})
	touch(t, filepath.Join(dir, "g/SKILL.md"))
	if text, _, _ := l.Body(sk); text != "New body.\n" {
		t.Errorf("body after edit %q", text)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pdf-forms/SKILL.md": skillMD("pdf-forms", "Fill PDF forms and flatten them.", "tags: [pdf]\n"),
		"xlsx/SKILL.md":      skillMD("xlsx", "Read and write spreadsheets; formulas, charts.", "tags: [excel, office]\n"),
		"docx/SKILL.md":      skillMD("docx", "Edit Word documents, including forms.", "tags: [word, office]\n"),
		"changelog/SKILL.md": skillMD("changelog", "Write a changelog from git history."),
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	s := l.Snapshot()
	var got []string
	for _, m := range s.Find("filling forms", "") {
		got = append(got, m.Skill.ID)
	}
	if !reflect.DeepEqual(got, []string{"pdf-forms", "docx", "xlsx"}) { // xlsx by "formulas"
		t.Errorf("find forms = %v", got)
	}
	got = nil
	for _, m := range s.Find("", "office") {
		got = append(got, m.Skill.ID)
	}
	if !reflect.DeepEqual(got, []string{"docx", "xlsx"}) {
		t.Errorf("tag office = %v", got)
	}
	if n := len(s.Find("", "")); n != 4 {
		t.Errorf("all = %d", n)
	}
}
