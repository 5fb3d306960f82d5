package config

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/redact"
)

// scpLike matches git's scp-like syntax, user@host:path.
var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:`) })

// repoNameRe is what a skills repository may be called (its folder name
// in the gateway's state).
var repoNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`) })

// LocalRepo reports whether a repository URL is a local path rather than a
// URL (scheme://…) or git's scp-like user@host:path.
func LocalRepo(url string) bool {
	return !strings.Contains(url, "://") && !scpLike().MatchString(url)
}

// RepoName is the name a repository gets by default: the last element of
// its URL or path without ".git".
func RepoName(url string) string {
	u := url
	if !LocalRepo(u) {
		// A query or fragment (?token=...) is no part of the name.
		u, _, _ = strings.Cut(u, "#")
		u, _, _ = strings.Cut(u, "?")
	}
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndex(u, ":"); i >= 0 && scpLike().MatchString(u) {
		u = u[i+1:]
	}
	return strings.TrimSuffix(path.Base(strings.ReplaceAll(u, `\`, "/")), ".git")
}

// skills checks the skills block.
func (v *validator) skills() {
	s := &v.c.Skills
	v.skillsRules()
	for i, p := range s.HooksDirs {
		if p == "" {
			v.errorf(fmt.Sprintf("skills.hooks_dirs[%d]", i), "empty folder name; remove the entry or name a folder")
		}
	}
	if s.ContextWindow < 1000 {
		v.errorf("skills.context_window", "%d tokens is too small for a context window; give the client's window, such as 200000 (the default)", s.ContextWindow)
	}
	if !(s.ResultShare > 0 && s.ResultShare <= 1) || math.IsNaN(s.ResultShare) {
		v.errorf("skills.result_share", "%v is not a share of the window; use a fraction above 0 and at most 1, such as 0.1 (the default)", s.ResultShare)
	}
	seen := map[string]int{}
	for i, r := range s.Repos {
		f := fmt.Sprintf("skills.repos[%d]", i)
		for _, e := range r.problems() {
			ve := v.errorf(f+"."+e.Field, "%s", e.Msg)
			if e.Field == "url" && r.URL == "" {
				v.unset(ve, f)
			}
		}
		if j, dup := seen[r.Name]; dup && repoNameRe().MatchString(r.Name) {
			v.errorf(f+".name", "repository %q is already skills.repos[%d]; give one of them another name:", r.Name, j)
		} else {
			seen[r.Name] = i
		}
	}
}

// Validate checks one repository entry, with Name and Layout filled in (as
// Parse does): each problem is an *Error whose Field is the entry's key.
func (r *SkillRepo) Validate() error {
	var errs []error
	for _, e := range r.problems() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

func (r *SkillRepo) problems() []*Error {
	var out []*Error
	add := func(field, format string, args ...any) {
		out = append(out, &Error{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case r.URL == "":
		add("url", "missing; give the repository's URL (https://, ssh://, git@host:path, file://) or a local path")
	case !LocalRepo(r.URL):
		scheme, _, _ := strings.Cut(r.URL, "://")
		if strings.Contains(r.URL, "://") && !slices.Contains([]string{"https", "http", "ssh", "git", "file"}, scheme) {
			add("url", "%q: unknown scheme %q; use https, http, ssh, git or file, or a local path", redact.URL(r.URL), scheme)
		}
	}
	if r.URL != "" && !repoNameRe().MatchString(r.Name) {
		add("name", "%q must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit; set name: to one", r.Name)
	}
	if strings.HasPrefix(r.Ref, "-") || strings.ContainsAny(r.Ref, " \t~^:?*[\\") {
		add("ref", "%q is not a branch, tag or commit", r.Ref)
	}
	if !slices.Contains([]string{"auto", "skills", "root"}, r.Layout) {
		add("layout", "unknown value %q; use auto, skills or root", r.Layout)
	}
	return out
}
