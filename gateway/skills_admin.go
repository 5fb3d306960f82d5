package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/skills/gitsource"
)

// skillGroup is the admin group of the skill repository tools, activated
// as @skill: skill__repo_add, skill__repo_update, skill__repo_remove and
// skill__repo_list. It is not "skills": adminSourceID("skills") is the
// skills meta-tools' source. Repositories added here survive restarts (the
// manager's state); those of the config are synced at start and reload.
const skillGroup = "skill"

func init() {
	adminGroups[skillGroup] = "Add, update, remove and list git repositories of skills, each pinned to a commit"
	adminExecutors[skillGroup] = func(g *Gateway) sdk.Executor { return skillAdmin{g} }
}

var skillAdminTools = []json.RawMessage{
	toolDef("repo_add", "Add a skills repository",
		"Fetch a git repository of skills and serve its skills, pinned to the commit `ref` resolves to (a branch, tag or commit; default the remote's HEAD). `url` is https://, ssh://, git@host:path, file:// or a local path (absolute, or relative to the gateway's working folder). `layout`: auto (skills/ when the repository has one, else its root), skills or root. `name` defaults to the URL's last element. Its skills are listed when this returns.",
		`{"type":"object","properties":{"url":{"type":"string"},"name":{"type":"string","pattern":"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$"},"ref":{"type":"string"},"layout":{"type":"string","enum":["auto","skills","root"],"default":"auto"}},"required":["url"]}`,
		false, false),
	toolDef("repo_update", "Update a skills repository",
		"Fetch a repository again and pin it to `ref` (default the ref it was added with, so a branch moves to its newest commit). The new commit's skills replace the old ones at once.",
		`{"type":"object","properties":{"name":{"type":"string"},"ref":{"type":"string"}},"required":["name"]}`,
		true, false),
	toolDef("repo_remove", "Remove a skills repository",
		"Stop serving a repository's skills and delete its checkout. A repository of the config comes back on the next reload or restart unless the config drops it.",
		`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		true, false),
	toolDef("repo_list", "List skills repositories",
		"Every git repository of skills: name, URL, ref, pinned commit, layout, whether the config or a client added it, and how many skills it serves; and config repositories that failed to load, with why.",
		`{"type":"object","properties":{}}`,
		false, true),
}

// skillAdmin serves the skill group's tools in process.
type skillAdmin struct{ g *Gateway }

var _ sdk.Executor = skillAdmin{}

func (a skillAdmin) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "gateway", Version: a.g.opts.Version, Kinds: []string{"admin"}}, nil
}

func (a skillAdmin) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Source != adminSourceID(skillGroup) {
		return sdk.Definitions{}, fmt.Errorf("%w: %s", sdk.ErrUnknownSource, req.Source)
	}
	return sdk.Definitions{Tools: skillAdminTools}, nil
}

func (a skillAdmin) Unload(context.Context, string) error { return nil }

// RepoInfo is one skills repository as skill__repo_list shows it.
type RepoInfo struct {
	gitsource.Repo
	// Source is what its skills' Source reads.
	Source string `json:"source"`
	// Skills counts the skills it serves.
	Skills int `json:"skills"`
}

func (a skillAdmin) Call(ctx context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	if req.Method != "tools/call" {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by the gateway's skill repository tools"}
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			URL    string `json:"url"`
			Name   string `json:"name"`
			Ref    string `json:"ref"`
			Layout string `json:"layout"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return toolAdminError(fmt.Sprintf("arguments: %v", err)), nil
	}
	a.g.mu.Lock()
	room := a.g.skills
	a.g.mu.Unlock()
	if room == nil {
		return toolAdminError("this gateway serves no skills; add skills: {dirs: [...]} or skills: {repos: [...]} to the config and restart it"), nil
	}
	repos, rerr := room.repoManager()
	if repos == nil {
		return toolAdminError(fmt.Sprintf("skill repositories are not available: %v", rerr)), nil
	}
	args := p.Arguments
	var (
		r    gitsource.Repo
		err  error
		verb string
	)
	switch p.Name {
	case "repo_list":
		return a.list(room), nil
	case "repo_add":
		spec := config.SkillRepo{Name: args.Name, URL: strings.TrimSpace(args.URL), Ref: args.Ref, Layout: args.Layout}
		if spec.URL != "" && config.LocalRepo(spec.URL) {
			if abs, err := filepath.Abs(spec.URL); err == nil {
				spec.URL = abs
			}
		}
		if spec.Name == "" {
			spec.Name = config.RepoName(spec.URL)
		}
		if spec.Layout == "" {
			spec.Layout = gitsource.LayoutAuto
		}
		if err := spec.Validate(); err != nil {
			return toolAdminError("repo_add: " + strings.ReplaceAll(err.Error(), "\n", "; ")), nil
		}
		if old, ok := repos.Get(spec.Name); ok {
			return toolAdminError(fmt.Sprintf("repo_add: a repository named %s already comes from %s; use skill__repo_update, or another name", spec.Name, old.URL)), nil
		}
		verb = "added"
		r, err = repos.Add(ctx, gitsource.Repo{Name: spec.Name, URL: spec.URL, Ref: spec.Ref, Layout: spec.Layout, Origin: "admin"})
	case "repo_update":
		verb = "updated"
		r, err = repos.Update(ctx, args.Name, args.Ref)
	case "repo_remove":
		if err := repos.Remove(ctx, args.Name); err != nil {
			return toolAdminError(fmt.Sprintf("repo_remove: %v%s", err, knownRepos(room, err))), nil
		}
		return toolAdminResult(fmt.Sprintf("removed %s\n", args.Name), map[string]any{"name": args.Name, "removed": true}), nil
	default:
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown skill repository tool " + p.Name}
	}
	if err != nil {
		return toolAdminError(fmt.Sprintf("%s: %v%s", p.Name, err, knownRepos(room, err))), nil
	}
	info := repoInfo(room, r)
	var ids []string
	for _, sk := range room.lib.Snapshot().Skills() {
		if sk.Source == r.Source() {
			ids = append(ids, sk.ID)
		}
	}
	text := fmt.Sprintf("%s %s: %s at %.12s, %d skills: %s\n", verb, r.Name, r.URL, r.Commit, len(ids), strings.Join(ids, ", "))
	// What the repository holds but does not serve: broken SKILL.md
	// files, skills another source already serves.
	var dropped []string
	for _, pr := range room.lib.Snapshot().Problems() {
		if abs, err := filepath.Abs(pr.Path); err == nil && strings.HasPrefix(abs, r.Dir+string(filepath.Separator)) {
			dropped = append(dropped, pr.String())
		}
	}
	if len(dropped) > 0 {
		text += fmt.Sprintf("not served (%d): %s\n", len(dropped), strings.Join(dropped, "; "))
	}
	return toolAdminResult(text, map[string]any{"repo": info, "skills": ids, "problems": orEmptyStrings(dropped)}), nil
}

// knownRepos names the repositories after an unknown-repository error.
func knownRepos(room *skillsRoom, err error) string {
	if !errors.Is(err, gitsource.ErrUnknownRepo) {
		return ""
	}
	var names []string
	repos, _ := room.repoManager()
	for _, r := range repos.List() {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return "; there are none (skill__repo_add adds one)"
	}
	return "; the repositories are " + strings.Join(names, ", ")
}

func repoInfo(room *skillsRoom, r gitsource.Repo) RepoInfo {
	n := 0
	for _, sk := range room.lib.Snapshot().Skills() {
		if sk.Source == r.Source() {
			n++
		}
	}
	return RepoInfo{Repo: r, Source: r.Source(), Skills: n}
}

func (a skillAdmin) list(room *skillsRoom) json.RawMessage {
	var rows []RepoInfo
	var b strings.Builder
	repos, _ := room.repoManager()
	for _, r := range repos.List() {
		info := repoInfo(room, r)
		rows = append(rows, info)
		ref := r.Ref
		if ref == "" {
			ref = "HEAD"
		}
		layout := r.Layout
		if layout == "" {
			layout = gitsource.LayoutAuto
		}
		by := "a client"
		if r.Origin == repoFromConfig {
			by = "the config"
		}
		fmt.Fprintf(&b, "%s: %s %s -> %.12s (%s layout, added by %s), %d skills\n", r.Name, r.URL, ref, r.Commit, layout, by, info.Skills)
	}
	room.mu.Lock()
	failed := make(map[string]string, len(room.repoErrs))
	for _, k := range slices.Sorted(maps.Keys(room.repoErrs)) {
		failed[k] = room.repoErrs[k]
		fmt.Fprintf(&b, "%s: not served: %s\n", k, failed[k])
	}
	room.mu.Unlock()
	if b.Len() == 0 {
		b.WriteString("no skill repositories (skills.repos in the config, or skill__repo_add)\n")
	}
	return toolAdminResult(b.String(), map[string]any{"repos": rows, "failed": failed})
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
