// Package gitsource adds git repositories of skills to a skills.Library at
// run time, each pinned to a commit. It is the only importer of go-git.
//
// A repository is mirrored (bare) under the manager's folder and the tree
// of the pinned commit is exported to a folder of its own, which becomes
// a root of the library: its skills/ folder when it has one (the layout of
// public skill repositories, skills/<name>/SKILL.md), else the repository
// root (<name>/SKILL.md). Updating exports the new commit beside the old
// one and swaps the roots, so a skill is never seen half-written.
//
//	m, _ := gitsource.New(ctx, "/var/cache/skillgate/git", lib)
//	repo, err := m.Add(ctx, gitsource.Repo{Name: "team", URL: "https://git.example.com/team/skills.git", Ref: "v1.2.0"})
package gitsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/skillgate/skillgate/skills"
)

// Limits of an exported tree.
const (
	maxFiles = 20000
	maxBytes = 512 << 20
)

// ErrUnknownRepo: no repository has that name.
var ErrUnknownRepo = errors.New("unknown skills repository")

// Layouts of a repository: where its skills are.
const (
	// LayoutAuto takes skills/ when the repository has one, else its root.
	LayoutAuto = "auto"
	// LayoutSkills takes skills/ (skills/<name>/SKILL.md).
	LayoutSkills = "skills"
	// LayoutRoot takes the root (<name>/SKILL.md).
	LayoutRoot = "root"
)

// Repo is a repository of skills, checked out at Commit.
type Repo struct {
	// Name labels the repository.
	Name string `json:"name"`
	// URL is where it is fetched from (a URL or a local path).
	URL string `json:"url"`
	// Ref is what Commit was resolved from: a branch, a tag, a commit
	// hash, or "" for the remote's HEAD.
	Ref string `json:"ref,omitempty"`
	// Layout is LayoutAuto ("" too), LayoutSkills or LayoutRoot.
	Layout string `json:"layout,omitempty"`
	// Origin is who added it, for the caller's bookkeeping (the gateway
	// writes "config" or "admin"); the manager keeps it as given.
	Origin string `json:"origin,omitempty"`
	// Commit is the pinned commit.
	Commit string `json:"commit"`
	// Dir is the exported tree; SkillsDir the root given to the library.
	Dir       string `json:"dir"`
	SkillsDir string `json:"skills_dir"`
}

// Source is the label the repository's skills carry (Skill.Source).
func (r Repo) Source() string { return "git " + r.URL + "@" + r.Commit }

// Library is what the manager needs of a skills.Library.
type Library interface {
	AddRoot(ctx context.Context, dir, source string) error
	RemoveRoot(ctx context.Context, dir string) error
}

var _ Library = (*skills.Library)(nil)

// Manager adds, updates and removes repositories. Its methods are safe for
// concurrent use; they serialize.
type Manager struct {
	root string
	lib  Library

	mu    sync.Mutex
	repos map[string]*Repo
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`) })

// New returns a manager keeping its mirrors and checkouts under root. It
// re-adds the repositories a previous manager left there, at their pinned
// commits, without fetching.
func New(ctx context.Context, root string, lib Library) (*Manager, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("skills repositories folder: %w", err)
	}
	m := &Manager{root: root, lib: lib, repos: map[string]*Repo{}}
	b, err := os.ReadFile(m.stateFile())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(b) > 0 {
		var list []*Repo
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", m.stateFile(), err)
		}
		for _, r := range list {
			if _, err := os.Stat(r.SkillsDir); err != nil {
				continue
			}
			if err := lib.AddRoot(ctx, r.SkillsDir, r.Source()); err != nil {
				return nil, err
			}
			m.repos[r.Name] = r
		}
	}
	return m, nil
}

func (m *Manager) stateFile() string { return filepath.Join(m.root, "repos.json") }

// List returns the repositories, by name.
func (m *Manager) List() []Repo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Repo, 0, len(m.repos))
	for _, r := range m.repos {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Add fetches the repository at r.URL, pins r.Ref (a branch, tag or
// commit; "" for the remote's HEAD) and adds the skills of r.Layout to the
// library. Of r, only Name, URL, Ref, Layout and Origin are read.
func (m *Manager) Add(ctx context.Context, r Repo) (Repo, error) {
	if !nameRE().MatchString(r.Name) {
		return Repo{}, fmt.Errorf("repository name %q: use letters, digits, '.', '_' and '-'", r.Name)
	}
	if r.URL == "" {
		return Repo{}, fmt.Errorf("repository %s: no URL", r.Name)
	}
	switch r.Layout {
	case "", LayoutAuto, LayoutSkills, LayoutRoot:
	default:
		return Repo{}, fmt.Errorf("repository %s: unknown layout %q; use auto, skills or root", r.Name, r.Layout)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.repos[r.Name]; old != nil && old.URL != r.URL {
		return Repo{}, fmt.Errorf("a repository named %s already comes from %s; remove it first", r.Name, old.URL)
	}
	return m.checkout(ctx, r)
}

// Get returns the repository called name.
func (m *Manager) Get(name string) (Repo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.repos[name]; r != nil {
		return *r, true
	}
	return Repo{}, false
}

// Update fetches the repository again and moves it to ref ("" keeps the
// ref it was added with).
func (m *Manager) Update(ctx context.Context, name, ref string) (Repo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.repos[name]
	if old == nil {
		return Repo{}, fmt.Errorf("%w: %s", ErrUnknownRepo, name)
	}
	if ref == "" {
		ref = old.Ref
	}
	return m.checkout(ctx, Repo{Name: name, URL: old.URL, Ref: ref, Layout: old.Layout, Origin: old.Origin})
}

// Remove drops the repository's skills from the library and deletes its
// files.
func (m *Manager) Remove(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.repos[name]
	if r == nil {
		return fmt.Errorf("%w: %s", ErrUnknownRepo, name)
	}
	if err := m.lib.RemoveRoot(ctx, r.SkillsDir); err != nil {
		return err
	}
	delete(m.repos, name)
	if err := m.save(); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(m.root, name))
}

func (m *Manager) checkout(ctx context.Context, spec Repo) (Repo, error) {
	name, url, ref := spec.Name, spec.URL, spec.Ref
	mirror := filepath.Join(m.root, name, "mirror.git")
	repo, err := fetch(ctx, mirror, url)
	if err != nil {
		return Repo{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	hash, err := resolve(repo, ref)
	if err != nil {
		return Repo{}, fmt.Errorf("%s: %w", url, err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return Repo{}, fmt.Errorf("%s: commit %s: %w", url, hash, err)
	}
	dir := filepath.Join(m.root, name, hash.String())
	if _, err := os.Stat(dir); err != nil {
		tmp := dir + ".tmp"
		_ = os.RemoveAll(tmp)
		if err := export(commit, tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return Repo{}, fmt.Errorf("%s: export %s: %w", url, hash, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return Repo{}, err
		}
	}
	r := &Repo{Name: name, URL: url, Ref: ref, Layout: spec.Layout, Origin: spec.Origin, Commit: hash.String(), Dir: dir, SkillsDir: dir}
	if r.Layout != LayoutRoot {
		fi, err := os.Stat(filepath.Join(dir, "skills"))
		switch {
		case err == nil && fi.IsDir():
			r.SkillsDir = filepath.Join(dir, "skills")
		case r.Layout == LayoutSkills:
			return Repo{}, fmt.Errorf("%s@%.12s has no skills/ folder; use layout root (or auto) for skills at the repository's root", url, hash)
		}
	}
	old := m.repos[name]
	if err := m.lib.AddRoot(ctx, r.SkillsDir, r.Source()); err != nil {
		return Repo{}, err
	}
	if old != nil && old.SkillsDir != r.SkillsDir {
		if err := m.lib.RemoveRoot(ctx, old.SkillsDir); err != nil {
			return Repo{}, err
		}
		if old.Dir != r.Dir {
			_ = os.RemoveAll(old.Dir)
		}
	}
	m.repos[name] = r
	return *r, m.save()
}

func (m *Manager) save() error {
	list := make([]*Repo, 0, len(m.repos))
	for _, r := range m.repos {
		list = append(list, r)
	}
	slices.SortFunc(list, func(a, b *Repo) int { return strings.Compare(a.Name, b.Name) })
	b, _ := json.MarshalIndent(list, "", "  ")
	tmp := m.stateFile() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, m.stateFile())
}

// fetch brings the bare mirror at dir up to date with url, cloning it the
// first time.
func fetch(ctx context.Context, dir, url string) (*git.Repository, error) {
	repo, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		repo, err = git.PlainCloneContext(ctx, dir, true, &git.CloneOptions{URL: url, Tags: git.AllTags})
		if err != nil {
			_ = os.RemoveAll(dir)
		}
		return repo, err
	}
	if err != nil {
		return nil, err
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin", Tags: git.AllTags, Force: true,
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"},
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, err
	}
	return repo, nil
}

// resolve turns a ref (branch, tag, full or short commit hash, "" for
// HEAD) into a commit hash.
func resolve(repo *git.Repository, ref string) (plumbing.Hash, error) {
	if ref == "" {
		ref = "HEAD"
	}
	for _, cand := range []string{ref, "refs/heads/" + ref, "refs/tags/" + ref} {
		if h, err := repo.ResolveRevision(plumbing.Revision(cand)); err == nil {
			// An annotated tag resolves to its commit.
			if tag, err := repo.TagObject(*h); err == nil {
				if c, err := tag.Commit(); err == nil {
					return c.Hash, nil
				}
			}
			return *h, nil
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("no branch, tag or commit %q", ref)
}

// export writes the commit's tree to dir: regular and executable files
// and symlinks (which the library's jail keeps inside each skill).
func export(c *object.Commit, dir string) error {
	tree, err := c.Tree()
	if err != nil {
		return err
	}
	files, total := 0, int64(0)
	return tree.Files().ForEach(func(f *object.File) error {
		files++
		total += f.Size
		if files > maxFiles || total > maxBytes {
			return fmt.Errorf("the tree holds more than %d files or %d MiB", maxFiles, maxBytes>>20)
		}
		if !filepath.IsLocal(f.Name) {
			return fmt.Errorf("path %q leaves the tree", f.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		switch f.Mode {
		case filemode.Symlink:
			target, err := f.Contents()
			if err != nil {
				return err
			}
			return os.Symlink(target, p)
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			mode := os.FileMode(0o644)
			if f.Mode == filemode.Executable {
				mode = 0o755
			}
			r, err := f.Reader()
			if err != nil {
				return err
			}
			defer r.Close()
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, r); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil // submodules are left out
	})
}
