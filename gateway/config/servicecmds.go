package config

import (
	"errors"
	"io"
	"strings"
)

// LoadForServices is Load for the commands that manage the services'
// containers: see ParseForServices.
func LoadForServices(path string) (*Config, error) { return load(path, modeServices) }

// ParseForServices is ParseForRun for the commands that manage the
// services' containers (skillgate services ...), which read only the
// services: section, service_dirs: and docker: (whose project names the
// containers). An operator may stop containers without holding the
// gateway's secrets, so a ${VAR} that is not set elsewhere (an auth
// token, a server's env) is no error: its field is left unset, and a
// Note says so. One not set inside a service's definition is that
// service's Problem, with file:line, for the command to refuse to start
// the service or to warn. One in docker: or service_dirs: stays an error.
func ParseForServices(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	return parse(r, name, lookup, modeServices)
}

// forServices sorts the unset variables of errs for ParseForServices:
// those in a service become its Problem, those outside what the services
// commands read become Notes; it returns the other problems.
func (c *Config) forServices(errs []*Error) []*Error {
	var rest []*Error
	inService := map[string][]*Error{}
	for _, e := range errs {
		switch name := c.serviceOf(e.Field); {
		case !errors.Is(e, ErrUndefinedVariable):
			rest = append(rest, e)
		case name != "":
			inService[name] = append(inService[name], e)
		case readByServices(e.Field):
			rest = append(rest, e)
		default:
			n := *e
			n.Msg += "; ignored: the services commands do not read it"
			c.Notes = append(c.Notes, &n)
		}
	}
	for name, es := range inService {
		c.Services[name].Problem = newServerProblem(es, "")
	}
	return rest
}

// readByServices reports whether field, outside services:, is one the
// services commands read: the project that names the containers, the
// binds they may mount, the files that define services.
func readByServices(field string) bool {
	for _, f := range []string{"docker", "service_dirs", "services"} {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return true
		}
	}
	return false
}

// serviceOf returns the name of the declared service whose definition
// holds field, or "".
func (c *Config) serviceOf(field string) string {
	rest, ok := strings.CutPrefix(field, "services.")
	if !ok {
		return ""
	}
	name := rest
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		name = rest[:i]
	}
	if s, ok := c.Services[name]; !ok || s == nil {
		return ""
	}
	return name
}
