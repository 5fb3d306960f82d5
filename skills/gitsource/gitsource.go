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
	"path"
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
	ReplaceRoot(ctx context.Context, old, dir, source string) error
}

var _ Library = (*skills.Library)(nil)

// Manager adds, updates and removes repositories. Its methods are safe for
// concurrent use; they serialize.
//
// Several processes (two gateways, a gateway and the CLI) may share a
// manager's folder. They take turns through a lock file: each change
// reads the state file (repos.json) under the lock, changes its one
// entry and writes it back, so no process drops another's. Each process
// holds a shared lock on every checkout it serves, and a checkout is
// deleted only by one that can lock it alone: an update or removal in
// one process never pulls files from under another. Give each set of
// repositories (each config) a folder of its own: the state says which
// repositories the folder serves, not who wants them.
type Manager struct {
	root string
	lib  Library

	mu     sync.Mutex
	repos  map[string]*Repo  // the repositories this manager serves
	holds  map[string]func() // checkout folder -> release of its shared lock
	closed bool
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`) })

// New returns a manager keeping its mirrors and checkouts under root. It
// re-adds the repositories the folder's state lists, at their pinned
// commits, without fetching. Close releases its hold on them.
func New(ctx context.Context, root string, lib Library) (*Manager, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("skills repositories folder: %w", err)
	}
	m := &Manager{root: root, lib: lib, repos: map[string]*Repo{}, holds: map[string]func(){}}
	// The state file is replaced by a rename, so it reads whole without
	// the lock.
	state, err := m.readState()
	if err != nil {
		return nil, err
	}
	for _, r := range state {
		if !m.hold(r.Dir) {
			continue
		}
		if _, err := os.Stat(r.SkillsDir); err != nil {
			m.release(r.Dir)
			_ = os.Remove(r.Dir + ".lock")
			continue
		}
		if err := lib.AddRoot(ctx, r.SkillsDir, r.Source()); err != nil {
			m.Close()
			return nil, err
		}
		m.repos[r.Name] = r
	}
	return m, nil
}

// Close releases the manager's hold on its checkouts (another process may
// then delete them); it serves nothing afterwards. It is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for dir, release := range m.holds {
		release()
		delete(m.holds, dir)
	}
	return nil
}

func (m *Manager) stateFile() string { return filepath.Join(m.root, "repos.json") }

// readState reads the folder's repos.json.
func (m *Manager) readState() (map[string]*Repo, error) {
	out := map[string]*Repo{}
	b, err := os.ReadFile(m.stateFile())
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(b) == 0) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	var list []*Repo
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s: %w; remove the file to start over (the repositories are fetched again)", m.stateFile(), err)
	}
	for _, r := range list {
		if r != nil && nameRE().MatchString(r.Name) {
			out[r.Name] = r
		}
	}
	return out, nil
}

// change runs fn on the folder's state under the folder's lock and writes
// the state back when fn succeeds.
func (m *Manager) change(fn func(state map[string]*Repo) error) error {
	unlock, _, err := lockFile(filepath.Join(m.root, ".lock"), true, true)
	if err != nil {
		return fmt.Errorf("lock %s: %w", m.root, err)
	}
	defer unlock()
	state, err := m.readState()
	if err != nil {
		return err
	}
	if err := fn(state); err != nil {
		return err
	}
	return m.save(state)
}

// hold takes a shared lock on a checkout folder this manager serves, so
// no other process deletes it. It reports false when it cannot.
func (m *Manager) hold(dir string) bool {
	if _, ok := m.holds[dir]; ok {
		return true
	}
	release, ok, err := lockFile(dir+".lock", false, false)
	if err != nil || !ok {
		return false
	}
	m.holds[dir] = release
	return true
}

// release drops the hold on dir.
func (m *Manager) release(dir string) {
	if release, ok := m.holds[dir]; ok {
		release()
		delete(m.holds, dir)
	}
}

// prune deletes the checkouts of the repository name that state does
// not pin and no process serves, and with all of them the repository's
// folder when state does not list it. A checkout another process serves
// stays; a later prune deletes it.
func (m *Manager) prune(name string, state map[string]*Repo) {
	dir := filepath.Join(m.root, name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cur := state[name]
	left := false
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() || e.Name() == "mirror.git" || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if cur != nil && cur.Dir == p {
			left = true
			continue
		}
		if _, held := m.holds[p]; held {
			left = true
			continue
		}
		unlock, ok, err := lockFile(p+".lock", true, false)
		if err != nil || !ok {
			left = true
			continue
		}
		_ = os.RemoveAll(p)
		_ = os.Remove(p + ".lock")
		unlock()
	}
	if cur == nil && !left {
		_ = os.RemoveAll(dir)
	}
}

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
// library. Of r, only Name, URL, Ref, Layout and Origin are read. A
// failed add leaves nothing behind in the manager's folder.
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

// Remove drops the repository's skills from the library, removes it from
// the folder's state and deletes its files (those no other process
// serves).
func (m *Manager) Remove(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.repos[name]
	return m.change(func(state map[string]*Repo) error {
		if r == nil && state[name] == nil {
			return fmt.Errorf("%w: %s", ErrUnknownRepo, name)
		}
		if r != nil {
			if err := m.lib.RemoveRoot(ctx, r.SkillsDir); err != nil {
				return err
			}
			m.release(r.Dir)
			delete(m.repos, name)
		}
		delete(state, name)
		m.prune(name, state)
		return nil
	})
}

func (m *Manager) checkout(ctx context.Context, spec Repo) (Repo, error) {
	if m.closed {
		return Repo{}, fmt.Errorf("repository %s: the manager is closed", spec.Name)
	}
	var out Repo
	err := m.change(func(state map[string]*Repo) error {
		fresh := state[spec.Name] == nil && m.repos[spec.Name] == nil
		if old := m.repos[spec.Name]; old != nil {
			if _, err := os.Stat(old.SkillsDir); err != nil {
				_ = os.RemoveAll(old.Dir) // damaged: export it again
			}
		}
		r, err := m.export(ctx, spec)
		if err != nil {
			if fresh {
				m.prune(spec.Name, state) // the mirror of a failed add
			}
			return err
		}
		if !m.hold(r.Dir) {
			return fmt.Errorf("%s: cannot lock the checkout %s", spec.URL, r.Dir)
		}
		old := m.repos[spec.Name]
		if old != nil && old.SkillsDir != r.SkillsDir {
			// One swap: no snapshot holds both commits' skills.
			err = m.lib.ReplaceRoot(ctx, old.SkillsDir, r.SkillsDir, r.Source())
		} else {
			err = m.lib.AddRoot(ctx, r.SkillsDir, r.Source())
		}
		if err != nil {
			if old == nil || old.Dir != r.Dir {
				m.release(r.Dir)
			}
			return err
		}
		if old != nil && old.Dir != r.Dir {
			m.release(old.Dir)
		}
		m.repos[spec.Name] = r
		state[spec.Name] = r
		m.prune(spec.Name, state)
		out = *r
		return nil
	})
	return out, err
}

// export fetches spec's repository into its mirror and exports the
// commit its ref resolves to, unless that commit is exported already.
func (m *Manager) export(ctx context.Context, spec Repo) (*Repo, error) {
	name, url, ref := spec.Name, spec.URL, spec.Ref
	mirror := filepath.Join(m.root, name, "mirror.git")
	repo, err := fetch(ctx, mirror, url)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	hash, err := resolve(repo, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w", url, hash, err)
	}
	dir := filepath.Join(m.root, name, hash.String())
	if _, err := os.Stat(dir); err != nil {
		tmp := dir + ".tmp"
		_ = os.RemoveAll(tmp)
		if err := export(commit, tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("%s: export %s: %w", url, hash, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	r := &Repo{Name: name, URL: url, Ref: ref, Layout: spec.Layout, Origin: spec.Origin, Commit: hash.String(), Dir: dir, SkillsDir: dir}
	if r.Layout != LayoutRoot {
		fi, err := os.Stat(filepath.Join(dir, "skills"))
		switch {
		case err == nil && fi.IsDir():
			r.SkillsDir = filepath.Join(dir, "skills")
		case r.Layout == LayoutSkills:
			return nil, fmt.Errorf("%s@%.12s has no skills/ folder; use layout root (or auto) for skills at the repository's root", url, hash)
		}
	}
	return r, nil
}

func (m *Manager) save(state map[string]*Repo) error {
	list := make([]*Repo, 0, len(state))
	for _, r := range state {
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
// and symlinks that stay inside the tree (the library's jail keeps each
// skill's inside its folder); absolute links and links climbing out of
// the tree are left out.
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
			// A link that is absolute or climbs out of the tree could only
			// reach the gateway's own files: it is left out.
			if path.IsAbs(target) || filepath.IsAbs(target) || !filepath.IsLocal(path.Join(path.Dir(f.Name), target)) {
				return nil
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
