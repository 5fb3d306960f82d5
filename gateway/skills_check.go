package gateway

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills"
	"github.com/skillgate/skillgate/skills/gitsource"
)

// openSkillsOffline opens the skills cfg serves without starting a
// gateway: its skills dirs and the repositories the gateway checked out
// for cfg (at their pinned commits, never fetched), which fetched names.
// closeLib releases them.
func openSkillsOffline(ctx context.Context, cfg *config.Config) (lib *skills.Library, fetched map[string]bool, closeLib func(), err error) {
	opts := SkillsOptions(cfg)
	opts.NoWatch, opts.Interval = true, -1
	lib, err = skills.Open(ctx, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	fetched = map[string]bool{}
	if dir := SkillReposDirFor(cfg); len(cfg.Skills.Repos) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "repos.json")); err == nil {
			mgr, err := gitsource.New(ctx, dir, lib)
			if err != nil {
				lib.Close()
				return nil, nil, nil, fmt.Errorf("skill repositories in %s: %w", dir, err)
			}
			for _, r := range mgr.List() {
				fetched[r.Name] = true
			}
			return lib, fetched, func() { mgr.Close(); lib.Close() }, nil
		}
	}
	return lib, fetched, func() { lib.Close() }, nil
}

// NonServerNamespaces returns the namespaces under which a gateway
// started on cfg would serve tools of sources other than its servers,
// found without starting one: the plugins of its plugins dirs that it
// serves (each under its name), and its skills with tools or pipelines
// (from the skills dirs and the repositories checked out for cfg; a
// repository not fetched yet is an error, as its skills are not known). A
// one-shot `skillgate call` starts only the server whose namespace
// prefixes the tool when none of these does.
func NonServerNamespaces(ctx context.Context, cfg *config.Config) ([]string, error) {
	var out []string
	for _, s := range scanPlugins(cfg).specs {
		out = append(out, s.Name)
	}
	if !cfg.Skills.Configured() {
		return out, nil
	}
	lib, fetched, closeLib, err := openSkillsOffline(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeLib()
	for _, r := range cfg.Skills.Repos {
		if !fetched[r.Name] {
			return nil, fmt.Errorf("skill repository %q is not fetched yet: its skills are not known before a gateway starts", r.Name)
		}
	}
	for _, sk := range lib.Snapshot().Skills() {
		if len(sk.ToolDirs) > 0 || sk.PipelinesDir != "" {
			out = append(out, skills.Namespace(sk.ID))
		}
	}
	return out, nil
}

// SkillsOptions are the skills.Options the gateway opens cfg's skills
// with (without the executor, logger and callbacks): its dirs and hooks,
// the namespaces skills may not take, the output budget, the longest a
// script may run, the state folder scripts get (SKILLGATE_STATE_DIR,
// under $XDG_STATE_HOME/skillgate/skills), and the variables and sandbox
// the operator allows or requires (skills.env_allow, skills.sandbox). The CLI opens the same library,
// so `skillgate skills run` gives scripts the state the gateway does.
func SkillsOptions(cfg *config.Config) skills.Options {
	return skills.Options{
		Dirs:               cfg.Skills.Dirs,
		HooksDirs:          cfg.Skills.HooksDirs,
		ReservedNamespaces: config.ReservedNamespaces(),
		OutputBudget:       SkillsBudget(cfg),
		StateDir:           filepath.Join(stateRoot(), "skills"),
		MaxTimeout:         time.Duration(cfg.Limits.MaxRequestTimeout),
		Env:                SkillsEnvRule(cfg),
		Sandbox:            SkillsSandboxRule(cfg),
	}
}

// CheckSkills reports what keeps the skills of lib from working as the
// gateway serves them under cfg, every problem at once:
//
//   - the snapshot's problems: SKILL.md files that do not parse or lead
//     out of their folder, reserved names, clashing prompt names;
//   - script policies (scripts: in SKILL.md) naming no script: no file
//     under scripts/, nor one elsewhere in the skill folder that
//     run_skill_script runs (at the key's line);
//   - scripts that cannot run as they are: executable without a #! line
//     or a known extension, links under scripts/ leading out of the
//     skill folder or to nothing (warnings);
//   - for a skill whose frontmatter does not load, its other problems
//     too: a name that differs from its folder, script policies naming
//     no script, scripts that cannot run;
//   - tool folders whose tool.yaml does not load, one problem a line,
//     or asks (env:, secrets:) for a variable the gateway does not pass
//     to skills (skills.env_allow), at the variable's line;
//   - pipelines/ files that do not compile, or call a tool of the skill's
//     own namespace it does not have (other tools are the catalog's, which
//     only a running gateway knows);
//   - requires naming skills that are not installed and, when withConfig,
//     servers and services cfg lacks;
//   - skills too large for the skills extension's skills/list;
//   - no skill at all in a folder that was given.
//
// `skillgate skills validate` prints them; `skillgate validate` calls it
// with the config's skills (withConfig true).
func CheckSkills(cfg *config.Config, lib *skills.Library, withConfig bool) []skills.Problem {
	snap := lib.Snapshot()
	out := slices.Clone(snap.Problems())
	wd, _ := os.Getwd()
	checked := map[string]bool{}
	rel := func(p string) string {
		if r, err := filepath.Rel(wd, p); err == nil && filepath.IsLocal(r) {
			return r
		}
		return p
	}
	sep := cmp.Or(cfg.Names.Separator, catalog.DefaultSeparator)
	env := SkillsEnvRule(cfg)
	// Skills whose frontmatter does not load: their other problems too.
	for _, p := range snap.Problems() {
		md := p.Path
		if p.Warning || filepath.Base(md) != skills.FileName || checked[md] {
			continue
		}
		checked[md] = true
		if !filepath.IsAbs(md) {
			md = filepath.Join(wd, md)
		}
		sk, more, ok := skills.Unserved(md, p.Path)
		if !ok {
			continue
		}
		out = append(out, more...)
		out = append(out, scriptProblems(sk, p.Path, rel)...)
	}
	for _, sk := range snap.Skills() {
		md := rel(filepath.Join(sk.Dir, skills.FileName))
		out = append(out, scriptProblems(sk, md, rel)...)
		ns := skills.Namespace(sk.ID)
		var own []string
		for _, d := range sk.ToolDirs {
			tool, err := toolspec.Load(d)
			if err != nil {
				f := filepath.Join(d, toolspec.FileName)
				out = append(out, toolProblems(f, rel(f), err)...)
				continue
			}
			if envProbs := env.ToolEnvProblems(d, rel(filepath.Join(d, toolspec.FileName)), tool); len(envProbs) > 0 {
				out = append(out, envProbs...) // the gateway does not serve it
				continue
			}
			own = append(own, catalog.ExposedName(ns, sep, tool.Name))
		}
		if sk.PipelinesDir != "" {
			loader := PipelineLoader(cfg, func(name string) bool {
				if strings.HasPrefix(name, ns+sep) {
					return slices.Contains(own, name)
				}
				return true
			})
			loader.ToolName = func(name string) string { return catalog.ExposedName(ns, sep, name) }
			loader.Inline = nil
			_, err := loader.Load(sk.PipelinesDir)
			for _, pe := range PipelineProblems(err) {
				out = append(out, skills.Problem{Path: rel(pe.Pos.File), Line: pe.Pos.Line, Msg: pipelineMsg(pe)})
			}
		}
	}
	var servers, services []string
	if withConfig {
		servers, services = slices.Clone(cfg.ServerOrder), mapKeys(cfg.Services)
		if servers == nil {
			servers = []string{}
		}
	}
	out = append(out, snap.Check(servers, services)...)
	out = append(out, skills.EntryProblems(snap)...)
	return out
}

// scriptProblems reports the scripts: keys of sk's frontmatter (in md)
// that name no script, at their lines, and the scripts that cannot run
// as they are (skills.ScriptProblems), their paths made relative by rel.
func scriptProblems(sk *skills.Skill, md string, rel func(string) string) []skills.Problem {
	var out []skills.Problem
	for _, name := range slices.Sorted(maps.Keys(sk.Meta.Scripts)) {
		if !slices.Contains(sk.Scripts, name) {
			line, col := sk.Meta.Pos("scripts." + name)
			have := "it has none"
			if len(sk.Scripts) > 0 {
				have = strings.Join(sk.Scripts, ", ")
			}
			out = append(out, skills.Problem{Path: md, Line: line, Column: col, Field: "scripts." + name,
				Msg: "no such script under scripts/ or elsewhere in the skill folder (not SKILL.md, hooks/ or a tool folder); fix the name or add the script (" + have + ")"})
		}
	}
	for _, p := range skills.ScriptProblems(sk) {
		p.Path = rel(p.Path)
		out = append(out, p)
	}
	return out
}

// pipelineMsg is a pipeline problem without its position (the Problem
// carries it).
func pipelineMsg(pe *pipelines.Error) string {
	msg := pe.Error()
	if p := pe.Pos.String(); p != "" {
		msg = strings.TrimPrefix(msg, p+": ")
	}
	return msg
}

// toolProblems splits a tool.yaml's load error into one problem a line;
// a line "<file>[:line[:col]]: msg" keeps its line and loses the file,
// which the problem names (as path).
func toolProblems(file, path string, err error) []skills.Problem {
	var out []skills.Problem
	for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		p := skills.Problem{Path: path, Msg: line}
		if rest, ok := strings.CutPrefix(line, file); ok {
			var n, col int
			switch {
			case strings.HasPrefix(rest, ": "):
				p.Msg = rest[2:]
			case len(rest) > 1 && rest[0] == ':':
				if _, err := fmt.Sscanf(rest, ":%d:%d:", &n, &col); err != nil {
					fmt.Sscanf(rest, ":%d:", &n)
				}
				if _, msg, ok := strings.Cut(rest, ": "); ok && n > 0 {
					p.Line, p.Msg = n, msg
				}
			}
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		out = append(out, skills.Problem{Path: path, Msg: err.Error()})
	}
	return out
}

// ValidateSkills checks the skills cfg serves without starting a gateway:
// its skills dirs and the repositories the gateway checked out for cfg
// (at their pinned commits, never fetched), with CheckSkills and the
// config's servers and services. It returns nil when cfg has no skills.
// `skillgate validate` prints its problems with the config's.
func ValidateSkills(ctx context.Context, cfg *config.Config) ([]skills.Problem, error) {
	if !cfg.Skills.Configured() {
		return nil, nil
	}
	lib, fetched, closeLib, err := openSkillsOffline(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeLib()
	probs := CheckSkills(cfg, lib, true)
	allKnown := true
	for _, r := range cfg.Skills.Repos {
		if !fetched[r.Name] {
			allKnown = false
			probs = append(probs, skills.Problem{Path: cfg.Source, Field: "skills.repos", Warning: true,
				Msg: fmt.Sprintf("repository %q (%s) is not fetched yet, so its skills are not checked; the gateway fetches it at start", r.Name, r.URL)})
		}
	}
	probs = append(probs, profileSkillProblems(cfg, lib.Snapshot(), allKnown)...)
	return probs, nil
}
