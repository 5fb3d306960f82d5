package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/pipelines"
)

// validateProblem is one problem `skillgate validate` reports, as --json
// prints it. Severity is "error" or "warning"; Source is "config",
// "plugin", "tool", "skill" or "pipeline".
type validateProblem struct {
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
	Source   string `json:"source"`
}

// foundPlugin is an executor plugin file that validate found and the
// gateway would start, as --json lists it under "plugins".
type foundPlugin struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// validateReport collects what validate finds: the problems, the plugins,
// and the lines its text output prints (each problem's, each plugin's and
// the summaries).
type validateReport struct {
	shown    string
	problems []validateProblem
	plugins  []foundPlugin
	lines    []string
	errors   int
}

// add records a problem at p, printed as text.
func (r *validateReport) add(p config.Pos, field, msg, severity, source, text string) {
	r.addProblem(validateProblem{File: p.File, Line: p.Line, Column: p.Col, Field: field,
		Message: msg, Severity: severity, Source: source}, text)
}

// addProblem records p, printed as text.
func (r *validateReport) addProblem(p validateProblem, text string) {
	r.problems = append(r.problems, p)
	r.lines = append(r.lines, text)
	if p.Severity == "error" {
		r.errors++
	}
}

// say adds a line to the text output alone.
func (r *validateReport) say(format string, args ...any) {
	r.lines = append(r.lines, r.shown+": "+fmt.Sprintf(format, args...))
}

// configProblems adds the problems err, from config.LoadForValidate,
// joins.
func (r *validateReport) configProblems(err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *config.Error
		if errors.As(e, &ce) {
			r.add(ce.Pos, ce.Field, ce.Msg, "error", "config", ce.Error())
		} else {
			r.add(config.Pos{File: r.shown}, "", e.Error(), "error", "config", e.Error())
		}
	}
}

// validate checks the config at path ("-": in) as the gateway would load
// it, and its plugins, tool folders, skills and pipelines, offline. A config with
// problems is still checked further where they leave a part whole (a
// pipeline's problems show with an unknown key's elsewhere); a folder of
// tools:, pipelines:, skills: or plugins: that is not there is a warning
// of the config, and the rest of the folders are checked.
func validate(ctx context.Context, path string, in io.Reader) (*validateReport, error) {
	r := &validateReport{shown: path, plugins: []foundPlugin{}}
	var cfg *config.Config
	var cfgErr error
	if path == "-" {
		r.shown = "<stdin>"
		// Relative paths resolve against the working directory.
		cfg, cfgErr = config.ParseForValidate(in, "<stdin>", os.LookupEnv)
	} else {
		cfg, cfgErr = config.LoadForValidate(path)
	}
	if cfgErr != nil {
		r.configProblems(cfgErr)
	}
	if cfg == nil {
		return r, nil
	}
	if cfgErr == nil && len(cfg.Servers) == 0 && len(cfg.Tools.Dirs) == 0 && len(cfg.Pipelines.Dirs) == 0 && cfg.Pipelines.Inline == nil &&
		len(cfg.Skills.Dirs) == 0 && len(cfg.Skills.Repos) == 0 && len(cfg.Plugins.Dirs) == 0 && len(cfg.Services) == 0 {
		const msg = "ok, but it serves nothing: add servers:, or tools:, pipelines: or skills: dirs"
		r.add(config.Pos{File: cfg.Source}, "", strings.TrimPrefix(msg, "ok, but "), "warning", "config", r.shown+": "+msg)
		return r, nil
	}
	// cfg.Warnings names the folders that are not there; the checks
	// of what the folders hold read the others.
	present := *cfg
	present.Tools.Dirs = existingDirs(cfg.Tools.Dirs)
	present.Pipelines.Dirs = existingDirs(cfg.Pipelines.Dirs)
	present.Skills.Dirs = existingDirs(cfg.Skills.Dirs)
	present.Skills.HooksDirs = existingDirs(cfg.Skills.HooksDirs)
	present.Plugins.Dirs = existingDirs(cfg.Plugins.Dirs)

	// A file in a plugins dir that cannot be served does not keep the
	// gateway from starting (it serves the others), so it is a warning.
	if !config.ProblemIn(cfgErr, "plugins") {
		for _, w := range gateway.PluginProblems(&present) {
			r.add(cfg.Where("plugins.dirs"), "plugins.dirs", w, "warning", "plugin", r.shown+": warning: "+w)
		}
		for _, sp := range gateway.PluginFiles(&present) {
			r.plugins = append(r.plugins, foundPlugin{Name: sp.Name, Path: sp.Path})
			r.say("plugin %s: %s (found; validate does not run it: `skillgate servers` shows whether it starts and loads)", sp.Name, sp.Path)
		}
	}
	for _, w := range cfg.Warnings() {
		// A server entry with a problem may warn of its echo.
		if !config.ProblemIn(cfgErr, entryOf(w.Field)) {
			r.add(w.Pos, w.Field, w.Msg, "warning", "config", "warning: "+w.Error())
		}
	}
	badTools := 0
	if len(present.Tools.Dirs) > 0 {
		if config.ProblemIn(cfgErr, "tools", "services", "service_dirs") {
			r.add(cfg.Where("tools"), "tools", "tool folders are not checked until the problems above are fixed", "warning", "tool",
				r.shown+": tool folders are not checked until the problems above are fixed")
		} else {
			for _, p := range gateway.ToolFolderProblems(&present) {
				if !p.Warning {
					badTools++
				}
				r.addProblem(skillProblemOf(p, "tool"), p.String())
			}
		}
	}
	badSkills := 0
	if cfg.Skills.Configured() && config.ProblemIn(cfgErr, "skills", "services", "service_dirs") {
		r.add(cfg.Where("skills"), "skills", "skills are not checked until the problems above are fixed", "warning", "skill",
			r.shown+": skills are not checked until the problems above are fixed")
	} else {
		// The skills dirs and the repositories already checked out for
		// this config (never fetched here).
		probs, err := gateway.ValidateSkills(ctx, &present)
		if err != nil {
			return nil, err
		}
		for _, p := range probs {
			if !p.Warning {
				badSkills++
			}
			r.addProblem(skillProblemOf(p, "skill"), p.String())
		}
	}
	if len(cfg.Pipelines.Dirs) > 0 || cfg.Pipelines.Inline != nil {
		if config.ProblemIn(cfgErr, "pipelines", "names", "services", "service_dirs") {
			r.add(cfg.Where("pipelines"), "pipelines", "pipelines are not checked until the problems above are fixed", "warning", "pipeline",
				r.shown+": pipelines are not checked until the problems above are fixed")
		} else {
			r.pipelines(&present, badSkills > 0 || cfgErr != nil)
		}
	}
	if badTools > 0 {
		r.say("%s in its tool folders", countProblems(badTools))
	}
	if badSkills > 0 {
		r.say("%s in its skills", countProblems(badSkills))
	}
	if r.errors == 0 && len(cfg.Pipelines.Dirs) == 0 && cfg.Pipelines.Inline == nil {
		r.say("ok")
	}
	return r, nil
}

// pipelines compiles cfg's pipelines without starting anything and adds
// every problem, so a config whose pipelines would not load is not called
// ok. With quietOK, pipelines that compile are not reported (there are
// other problems to report).
func (r *validateReport) pipelines(cfg *config.Config, quietOK bool) {
	list, err := gateway.PipelineLoader(cfg, nil).Load(cfg.Pipelines.Dirs...)
	problems := gateway.PipelineProblems(err)
	for _, p := range problems {
		r.pipelineProblem(p)
	}
	if len(problems) > 0 {
		r.say("%s in its pipelines", countProblems(len(problems)))
		return
	}
	if quietOK {
		return
	}
	n := "1 pipeline"
	if len(list) != 1 {
		n = fmt.Sprintf("%d pipelines", len(list))
	}
	r.say("ok (%s; tool names are not checked: skillgate pipeline validate --all checks them against the servers)", n)
}

func (r *validateReport) pipelineProblem(p *pipelines.Error) {
	r.addProblem(pipelineProblemOf(p), p.Error())
}

// existingDirs returns the folders of dirs that are there.
func existingDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !config.MissingDir(d) {
			out = append(out, d)
		}
	}
	return out
}

// entryOf returns the part of the config a field is in: a server's,
// service's or profile's entry (servers.x), or a top-level key.
func entryOf(field string) string {
	top, rest, _ := strings.Cut(field, ".")
	if i := strings.IndexByte(top, '['); i >= 0 {
		return top[:i]
	}
	switch top {
	case "servers", "services", "profiles", "bundles":
		name, _, _ := strings.Cut(rest, ".")
		return top + "." + name
	}
	return top
}
