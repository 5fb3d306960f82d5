package config

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Warnings returns what would keep servers of a valid config from starting
// on this machine, each with file:line and what to do: a command that is
// not in the PATH the server gets (the gateway's, or the entry's env.PATH,
// as the mcp executor looks it up: absolute folders only), a command path
// that does not exist or is not an executable file, a cwd that is not a
// folder; a profile that names skills but whose allow: or deny:
// remove every one of the SkillsTools, through which a client uses them;
// and listen.http beyond loopback without auth.tokens (ListenWarning). They are warnings, not
// errors: a config may be checked on one machine and run on another. Disabled and image servers are not checked.
// A folder of tools:, pipelines:, skills: or plugins: that is not there is
// one too (see missingDirs).
func (c *Config) Warnings() []*Error {
	var out []*Error
	warn := func(field, format string, args ...any) {
		out = append(out, &Error{Pos: c.where(field), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if w := c.ListenWarning(c.Listen.HTTP); w != nil {
		out = append(out, w)
	}
	for _, name := range c.serverNames() {
		s := c.Servers[name]
		if s == nil || s.Disabled || s.Image != "" || s.Command == "" || s.Problem != nil {
			continue
		}
		f := "servers." + name
		if s.Cwd != "" {
			if fi, err := os.Stat(s.Cwd); err != nil || !fi.IsDir() {
				warn(f+".cwd", "%s is not a folder here; create it or fix the path", s.Cwd)
				continue // the command is looked up in it
			}
		}
		if strings.ContainsRune(s.Command, '/') || strings.ContainsRune(s.Command, filepath.Separator) {
			commandPath(warn, f+".command", s)
		} else if runtime.GOOS != "windows" { // PATHEXT and the like: left to the executor
			commandName(warn, f+".command", s)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Profiles)) {
		p := c.Profiles[name]
		if p == nil || len(p.Skills) == 0 || keepsAny(p, SkillsTools) {
			continue
		}
		warn("profiles."+name+".skills", "profile %s names skills, but its allow:/deny: remove every skills tool (%s), so a client gets "+
			"their prompts and resources but has no tool to load or run them; let allow: keep them or deny: spare them",
			name, strings.Join(SkillsTools, ", "))
	}
	out = append(out, c.missingDirs()...) // tools:, pipelines:, skills:, plugins:
	// env_passthrough and auth.tokens that weaken the gateway: see validate.go.
	out = append(out, c.riskWarnings()...)
	return out
}

// SkillsTools are the meta-tools through which a client uses skills, as
// the gateway names them (skills.ToolFind and the others).
var SkillsTools = []string{"find_skills", "load_skill", "read_skill_file", "run_skill_script"}

// keepsAny reports whether profile p keeps one of the tools named (the
// gateway adds the skills tools to a profile that names skills): allow:
// (when set) keeps it and deny: does not remove it.
func keepsAny(p *Profile, tools []string) bool {
	for _, t := range tools {
		if (len(p.Allow) == 0 || globsMatch(p.Allow, t)) && !globsMatch(p.Deny, t) {
			return true
		}
	}
	return false
}

func globsMatch(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// commandPath checks a command given as a path.
func commandPath(warn func(field, format string, args ...any), field string, s *Server) {
	path := s.Command
	if !filepath.IsAbs(path) && s.Cwd != "" {
		path = filepath.Join(s.Cwd, path) // as the executor resolves it
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		warn(field, "%s does not exist here; fix the path (a relative one is resolved against the config file's folder, or cwd: when set), or build the server first", path)
	case fi.IsDir():
		warn(field, "%s is a folder, not a program; name the server's executable file", path)
	case runtime.GOOS != "windows" && fi.Mode()&0o111 == 0:
		warn(field, "%s is not executable; make it so (chmod +x) or run it with its interpreter (command: node, args: [%s])", path, s.Command)
	}
}

// commandName checks a command looked up in the PATH the server gets.
func commandName(warn func(field, format string, args ...any), field string, s *Server) {
	path, ok := s.Env["PATH"]
	from, note := "its env.PATH", ""
	if !ok {
		path, from = os.Getenv("PATH"), "PATH here"
		note = " (the server gets the PATH skillgate was started with; a desktop client's may be shorter than a shell's)"
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue // the executor skips them too
		}
		if fi, err := os.Stat(filepath.Join(dir, s.Command)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return
		}
	}
	warn(field, "%q is not found in %s (%s); install it, give its full path, or set env.PATH%s", s.Command, from, path, note)
}
