package config

import (
	"errors"
	"io"
	"strings"
)

// LoadForSkills is Load for the commands that work on skills: see
// ParseForSkills.
func LoadForSkills(path string) (*Config, error) { return load(path, modeSkills) }

// ParseForSkills is ParseForRun for the commands that work on skills
// (skillgate skills ...), which read only the skills: section and what it
// needs: limits.max_request_timeout (the longest a script runs),
// names.separator and pipelines.env (a skill's pipelines compile with
// them), the names of the servers and services (requires: is checked
// against them) and auth.tokens (skills never get the variables tokens
// come from). A ${VAR} that is not set elsewhere (a pipelines dir, a
// server's env, a service's image) is no error: its field is left unset,
// and a Note says so. One not set in auth: is a Note too, and auth: keeps
// its default: no variable of the environment holds a token whose own
// variable is not set. One not set in what the commands read stays an
// error, with file:line.
func ParseForSkills(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	return parse(r, name, lookup, modeSkills)
}

// forSkills sorts the unset variables of errs for ParseForSkills: those
// outside what the skills commands read become Notes; it returns the
// other problems.
func (c *Config) forSkills(errs []*Error) []*Error {
	var rest []*Error
	for _, e := range errs {
		if !errors.Is(e, ErrUndefinedVariable) || readBySkills(e.Field) {
			rest = append(rest, e)
			continue
		}
		n := *e
		if e.Field == "auth" || strings.HasPrefix(e.Field, "auth.") {
			c.Auth = Default().Auth
			n.Msg += "; ignored by the skills commands: no variable holds a token whose variable is not set"
		} else {
			n.Msg += "; ignored: the skills commands do not read it"
		}
		c.Notes = append(c.Notes, &n)
	}
	return rest
}

// readBySkills reports whether field is one the skills commands read.
func readBySkills(field string) bool {
	if field == "skills" || strings.HasPrefix(field, "skills.") {
		return true
	}
	for _, f := range []string{"limits.max_request_timeout", "names.separator", "pipelines.env"} {
		if field == f || strings.HasPrefix(field, f+"[") {
			return true
		}
	}
	return false
}
