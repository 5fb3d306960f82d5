package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/redact"
	"github.com/skillgate/skillgate/internal/yamldoc"

	"gopkg.in/yaml.v3"
)

// Load reads the config file at path, expanding variables from the
// environment. See Parse.
func Load(path string) (*Config, error) { return load(path, modeCheck) }

// LoadForRun is Load for running the gateway: see ParseForRun.
func LoadForRun(path string) (*Config, error) { return load(path, modeRun) }

// LoadForStdio is Load for running the gateway over stdio: see
// ParseForStdio.
func LoadForStdio(path string) (*Config, error) { return load(path, modeStdio) }

// mode is how strict parse is with ${VAR}s that are not set.
type mode int

const (
	modeCheck    mode = iota // Parse: every problem is an error
	modeRun                  // ParseForRun: problems in servers entries fail only their servers
	modeStdio                // ParseForStdio: and those in HTTP-only settings become Notes
	modeValidate             // ParseForValidate: as modeCheck, and the config comes back with its errors
	modeServices             // ParseForServices: those outside services: and docker: are ignored
	modeSkills               // ParseForSkills: those outside skills: and what it needs are ignored
)

func load(path string, run mode) (*Config, error) {
	path, err := expandHome(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w%s", err, notFoundHint(path, err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, notAFile(path)
	}
	return parse(f, path, os.LookupEnv, run)
}

// expandHome expands a leading ~/ (or a lone ~) in a config path to the
// user's home folder: MCP clients start the gateway without a shell, so
// `-c ~/skillgate.yaml` in their config reaches it as written.
func expandHome(path string) (string, error) {
	rest, ok := strings.CutPrefix(path, "~")
	if !ok || (rest != "" && rest[0] != '/' && rest[0] != filepath.Separator) {
		return path, nil // ~user/... is left alone, as it names another user's home
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: cannot expand ~: %v; give the config's absolute path", path, err)
	}
	return filepath.Join(home, rest), nil
}

// notFoundHint explains a relative config path that is not found: it was
// looked for in the working folder, which for a gateway launched by a
// desktop client is / (or wherever the client runs), not the folder the
// user wrote the config in.
func notFoundHint(path string, err error) string {
	if !errors.Is(err, fs.ErrNotExist) || filepath.IsAbs(path) {
		return ""
	}
	wd, werr := os.Getwd()
	if werr != nil {
		wd = "unknown: " + werr.Error()
	}
	return fmt.Sprintf(" (a relative path is resolved against the working folder, here %s; MCP clients such as Claude Desktop start "+
		"the gateway in / or a folder of their own, so give the config's absolute path: -c /path/to/%s)", wd, filepath.Base(path))
}

// Parse reads a skillgate.yaml from r over Default. name is the file's name,
// used in error positions and to resolve relative folders; lookup resolves
// ${VAR} references (nil means no variable is set). Unknown keys, bad values
// and everything Validate finds are reported together, as *Error values
// joined with errors.Join, sorted by position.
func Parse(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	return parse(r, name, lookup, modeCheck)
}

// ParseForRun is Parse for running the gateway, where one broken server
// must not take the others down: when every problem is inside a servers
// entry (a ${VAR} that is not set, an unknown key, a bad value, an invalid
// name), it returns the config with each of those servers' Problem saying
// what (with file:line), for the gateway to show them failed and serve
// the rest. A problem anywhere else is an error, as for Parse, and then
// every problem is reported, those too. `skillgate validate` uses Parse:
// there these are errors. Every unset variable it reports says where the
// gateway reads variables from.
func ParseForRun(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	return parse(r, name, lookup, modeRun)
}

// ParseForStdio is ParseForRun for a gateway that serves one client over
// stdio and no HTTP: a ${VAR} that is not set in a setting only the HTTP
// front end reads (listen:, auth:, limits.http_body_cap,
// limits.shutdown_delay and limits.max_sessions) is no error but a Note, and the setting keeps its
// default. A desktop client starts the gateway with a reduced
// environment, where an auth token's variable is rarely set.
func ParseForStdio(r io.Reader, name string, lookup func(string) (string, bool)) (*Config, error) {
	return parse(r, name, lookup, modeStdio)
}

func parse(r io.Reader, name string, lookup func(string) (string, bool), run mode) (*Config, error) {
	root, err := parseYAML(r, name)
	if err != nil {
		return nil, err
	}
	c := Default()
	c.Source = name
	d := &decoder{file: name, lookup: lookup, expand: true, pos: map[string]Pos{}}
	if root != nil {
		d.decode(root, reflect.ValueOf(c).Elem(), "")
		c.ServerOrder = d.order["servers"]
	}
	for name, s := range c.Servers {
		if s == nil {
			continue
		}
		for k := range s.Env {
			if d.fromEnv[join("servers."+name+".env", k)] {
				s.SecretEnv = append(s.SecretEnv, k)
			}
		}
		slices.Sort(s.SecretEnv)
		s.SecretValues = d.secretValues("servers."+name, s)
	}
	d.serviceDirs(c, filepath.Dir(name))
	c.pos = d.pos
	c.finish()
	errs := d.errs
	v := c.validate()
	for _, e := range v.errs {
		sc := v.scopes[e]
		if !d.hides(e, sc) {
			errs = append(errs, d.emptied(e, sc)...)
		}
	}
	hint := ""
	switch run {
	case modeRun:
		hint = varsHint
	case modeStdio:
		errs = c.noteHTTPOnly(errs)
		hint = stdioVarsHint
	case modeServices:
		errs = c.forServices(errs)
	case modeSkills:
		errs = c.forSkills(errs)
	}
	if (run == modeRun || run == modeStdio || run == modeServices || run == modeSkills) && len(errs) > 0 {
		if broken, rest := c.inServers(errs); len(rest) == 0 {
			for name, es := range broken {
				c.Servers[name].Problem = newServerProblem(es, hint)
			}
			errs = nil
		} else {
			hintUnset(errs, hint)
		}
	}
	if len(errs) > 0 && run == modeValidate {
		return c, joinSorted(errs)
	}
	if len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	return c, nil
}

// secretValues returns the values ${VAR}s gave the command, args, cwd and
// url of the server s, written at field, that are credentials, sorted.
//
// An env entry written with a ${VAR} is a secret whole (SecretEnv): env is
// where credentials go. Elsewhere a ${VAR} often holds something ordinary,
// ${HOME}/project, ${PORT}, a host name, which masked would garble every
// message about the server; so there a value counts as a secret when its
// variable is named like a credential (redact.CredentialName: ${MY_API_KEY},
// ${GITHUB_PAT}) or when the value looks like a token (redact.TokenLike:
// ghp_..., sk-..., AKIA..., a long random string). In url, a value is also a
// secret wherever it lands but in the host and port: in the path
// (/mcp/${ZAP_KEY}/sse, as Zapier and Composio hand out), the userinfo, the
// query or the fragment; of a value that holds the host too (a whole URL
// from one ${VAR}), what follows the host and the userinfo are.
func (d *decoder) secretValues(field string, s *Server) []string {
	var out []string
	u, err := url.Parse(s.URL)
	host := ""
	if err == nil {
		host = u.Host
	}
	for f, uses := range d.vars {
		rest, ok := strings.CutPrefix(f, field+".")
		if !ok || !(rest == "command" || rest == "cwd" || rest == "url" || strings.HasPrefix(rest, "args[")) {
			continue
		}
		for _, v := range uses {
			switch {
			case redact.CredentialName(v.name) || redact.TokenLike(v.value):
				out = append(out, v.value)
			case rest != "url" || (host != "" && strings.Contains(host, v.value)):
				// an ordinary value, or the URL's host or port
			case host != "" && strings.Contains(v.value, host):
				i := strings.Index(v.value, host) + len(host)
				out = append(out, v.value[i:])
				out = append(out, redact.URLSecrets(v.value)...)
			default:
				out = append(out, v.value)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// httpOnly are the fields only the HTTP front end reads, or their
// prefixes (ending in .).
var httpOnly = []string{"listen", "listen.", "auth", "auth.", "limits.http_body_cap", "limits.shutdown_delay", "limits.max_sessions"}

// isHTTPOnly reports whether field is read by the HTTP front end alone.
func isHTTPOnly(field string) bool {
	for _, f := range httpOnly {
		if field == f || (strings.HasSuffix(f, ".") && strings.HasPrefix(field, f)) {
			return true
		}
	}
	return false
}

// noteHTTPOnly turns the ${VAR}s not set in HTTP-only settings into
// Notes, and resets those settings to their defaults, for a gateway that
// serves no HTTP; it returns the other problems.
func (c *Config) noteHTTPOnly(errs []*Error) []*Error {
	var rest []*Error
	def := Default()
	for _, e := range errs {
		if !errors.Is(e, ErrUndefinedVariable) || !isHTTPOnly(e.Field) {
			rest = append(rest, e)
			continue
		}
		switch {
		case strings.HasPrefix(e.Field, "listen"):
			c.Listen = def.Listen
		case strings.HasPrefix(e.Field, "auth"):
			c.Auth = def.Auth
		case e.Field == "limits.http_body_cap":
			c.Limits.HTTPBodyCap = def.Limits.HTTPBodyCap
		case e.Field == "limits.shutdown_delay":
			c.Limits.ShutdownDelay = def.Limits.ShutdownDelay
		case e.Field == "limits.max_sessions":
			c.Limits.MaxSessions = def.Limits.MaxSessions
		}
		n := *e
		n.Msg += "; ignored over stdio, where no HTTP front end runs (set it before serving HTTP)"
		c.Notes = append(c.Notes, &n)
	}
	return rest
}

// hintUnset adds hint, where the gateway reads variables from, to the
// last unset variable of errs in file order.
func hintUnset(errs []*Error, hint string) {
	if hint == "" {
		return
	}
	var last *Error
	for _, e := range errs {
		if errors.Is(e, ErrUndefinedVariable) && (last == nil ||
			cmp.Or(cmp.Compare(e.Pos.Line, last.Pos.Line), cmp.Compare(e.Pos.Col, last.Pos.Col)) > 0) {
			last = e
		}
	}
	if last != nil {
		last.Msg += " " + hint
	}
}

// varsHint says where a gateway reads ${VAR}s from; stdioVarsHint says
// it to one served over stdio, which a desktop client starts with little
// of the user's environment.
const (
	varsHint      = "(skillgate reads variables from the environment it was started in; restart skillgate after setting one)"
	stdioVarsHint = "(skillgate reads variables from the environment it was started in, " +
		"where a desktop client passes only the env: of its entry for skillgate; restart skillgate after setting one)"
)

// inServers splits errs into the problems inside server entries, by
// server name, and the rest. A field that more than one name could hold
// ("servers.a.b.env" of servers a and a.b: a name with a dot is invalid,
// but a problem in the config) counts for each of them.
func (c *Config) inServers(errs []*Error) (map[string][]*Error, []*Error) {
	broken := map[string][]*Error{}
	var rest []*Error
	for _, e := range errs {
		names := c.serversOf(e.Field)
		if len(names) == 0 {
			rest = append(rest, e)
		}
		for _, name := range names {
			broken[name] = append(broken[name], e)
		}
	}
	return broken, rest
}

// serversOf returns the names of the servers whose entry may hold field.
func (c *Config) serversOf(field string) []string {
	rest, ok := strings.CutPrefix(field, "servers.")
	if !ok {
		return nil
	}
	var out []string
	for name, s := range c.Servers {
		if after, ok := strings.CutPrefix(rest, name); ok && s != nil && (after == "" || after[0] == '.' || after[0] == '[') {
			out = append(out, name)
		}
	}
	return out
}

// serverProblem is a server's or a service's Problem: what is wrong in
// its entry (a ${VAR} that is not set, an unknown key, a bad value or
// name), in file order, and hint, said after an unset variable.
type serverProblem struct {
	errs []*Error
	hint string
}

func newServerProblem(es []*Error, hint string) serverProblem {
	slices.SortFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return serverProblem{errs: es, hint: hint}
}

func (p serverProblem) Error() string {
	msgs := make([]string, len(p.errs))
	for i, e := range p.errs {
		msgs[i] = e.Error()
	}
	msg := strings.Join(msgs, "; ")
	if p.hint != "" && errors.Is(p, ErrUndefinedVariable) {
		msg += " " + p.hint
	}
	return msg
}

// Unwrap returns the problems, each an *Error.
func (p serverProblem) Unwrap() []error {
	out := make([]error, len(p.errs))
	for i, e := range p.errs {
		out[i] = e
	}
	return out
}

// OnlyUnset reports whether err, a server's Problem, is only about ${VAR}s
// that are not set: the environment's doing more than the config's.
func OnlyUnset(err error) bool {
	p, ok := err.(serverProblem)
	if !ok {
		return errors.Is(err, ErrUndefinedVariable)
	}
	for _, e := range p.errs {
		if !errors.Is(e, ErrUndefinedVariable) {
			return false
		}
	}
	return len(p.errs) > 0
}

// hides reports whether the validation problem e only echoes a decode
// problem: a field it is about failed to decode, or it is a required key
// not set in an entry that has an unknown key (likely that key, misspelt).
// An unknown key hides nothing else: its siblings were read as written.
func (d *decoder) hides(e *Error, sc scope) bool {
	if sc.unset != "" && d.unknown[sc.unset] {
		return true
	}
	if !sc.entry {
		return d.spoiled(e.Field)
	}
	if d.bad[e.Field] {
		return true
	}
	for _, k := range sc.keys {
		if d.spoiled(e.Field + "." + k) {
			return true
		}
	}
	return false
}

// emptied returns e, or, when a field e is about was written with ${VAR}
// and came out empty, an error at that field saying so: "url is missing"
// would send the user looking for a key that is there.
func (d *decoder) emptied(e *Error, sc scope) []*Error {
	fields := []string{e.Field}
	for _, k := range sc.keys {
		fields = append(fields, e.Field+"."+k)
	}
	var out []*Error
	for _, f := range fields {
		if raw, ok := d.blank[f]; ok {
			out = append(out, &Error{Pos: d.pos[f], Field: f, Msg: emptyMsg(raw, d.lookup)})
		}
	}
	if len(out) == 0 {
		return []*Error{e}
	}
	return out
}

var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$?\$\{([A-Za-z_][A-Za-z0-9_]*)`) })

// emptyMsg says that raw, a value with ${VAR} references, expanded to "".
func emptyMsg(raw string, lookup func(string) (string, bool)) string {
	var set []string
	for _, m := range varName().FindAllStringSubmatch(raw, -1) {
		if strings.HasPrefix(m[0], "$$") || slices.Contains(set, m[1]) || lookup == nil {
			continue
		}
		if v, ok := lookup(m[1]); ok && v == "" {
			set = append(set, m[1])
		}
	}
	switch len(set) {
	case 0:
		return fmt.Sprintf("empty after expanding %q; give it a value", raw)
	case 1:
		return fmt.Sprintf("empty after expanding %q: %s is set to an empty value; set it, or give a default: ${%s:-value}", raw, set[0], set[0])
	}
	return fmt.Sprintf("empty after expanding %q: %s are set to empty values; set them, or give defaults: ${%s:-value}", raw, strings.Join(set, ", "), set[0])
}

// finish fills per-entry defaults and resolves relative folders, and the
// relative paths of server commands when the config came from a file.
func (c *Config) finish() {
	base := filepath.Dir(c.Source)
	fromFile := c.Source != "" && !strings.HasPrefix(c.Source, "<")
	resolve := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	for _, d := range [][]string{c.Tools.Dirs, c.Pipelines.Dirs, c.Skills.Dirs, c.Skills.HooksDirs, c.Plugins.Dirs} {
		for i, p := range d {
			d[i] = resolve(p)
		}
	}
	for i, r := range c.Skills.Repos {
		if r == nil {
			r = &SkillRepo{}
			c.Skills.Repos[i] = r
		}
		if r.URL != "" && LocalRepo(r.URL) {
			r.URL = resolve(r.URL)
		}
		if r.Name == "" {
			r.Name = RepoName(r.URL)
		}
		if r.Layout == "" {
			r.Layout = "auto"
		}
	}
	for name, s := range c.Servers {
		if s == nil {
			s = &Server{}
			c.Servers[name] = s
		}
		if s.Start == "" {
			s.Start = "eager"
		}
		if t, ok := clientTypes[s.Type]; ok && s.Transport == "" {
			s.Transport = t
		}
		s.Cwd = resolve(s.Cwd)
		if fromFile && s.Cwd == "" && s.Image == "" && isRelPath(s.Command) {
			// Against the file, not the working folder of whoever runs the
			// gateway (a desktop client); with cwd set, the stdio executor
			// resolves it against cwd, itself resolved above.
			s.Command = resolve(s.Command)
			if !filepath.IsAbs(s.Command) && !isRelPath(s.Command) {
				s.Command = "." + string(filepath.Separator) + s.Command // not a name to look up in PATH
			}
		}
		s.Pos = c.pos["servers."+name]
	}
	for name, s := range c.Services {
		if s == nil {
			s = &Service{}
			c.Services[name] = s
		}
		s.Pos = c.pos["services."+name]
	}
	for name, e := range c.Executors {
		if e == nil {
			c.Executors[name] = &Executor{}
		}
	}
	for name, b := range c.Bundles {
		if b == nil {
			c.Bundles[name] = &Bundle{}
		}
	}
	for name, p := range c.Profiles {
		if p == nil {
			c.Profiles[name] = &Profile{}
		}
	}
}

// isRelPath reports whether a command is a relative path, such as
// ./server or bin/server, rather than a name looked up in PATH.
func isRelPath(cmd string) bool {
	return cmd != "" && !filepath.IsAbs(cmd) && strings.ContainsAny(cmd, "/"+string(filepath.Separator))
}

// parseYAML returns the single document's root node, or nil for an empty file.
func parseYAML(r io.Reader, name string) (*yaml.Node, error) {
	data, err := readAll(r, name)
	if err != nil {
		return nil, err
	}
	doc, err := readDocument(data, name)
	if err != nil || doc == nil || len(doc.Content) == 0 {
		return nil, err
	}
	return doc.Content[0], nil
}

// readDocument returns data's single YAML document, or nil when there is
// none. A second document is an error: nothing would read it.
func readDocument(data []byte, name string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err, data, name)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(err, data, name)
		}
		return nil, &Error{Pos: Pos{File: name, Line: extra.Line, Col: extra.Column},
			Msg: "a second YAML document; keep one document per file (remove the ---)"}
	}
	// The decoder follows aliases freely: none loops, and together they
	// bring a bounded number of values.
	if probs := yamldoc.Aliases(&doc); len(probs) > 0 {
		errs := make([]*Error, len(probs))
		for i, p := range probs {
			errs[i] = problemError(p, name)
		}
		return nil, joinSorted(errs)
	}
	return &doc, nil
}

// maxErrors is how many problems an error lists; a file that is wrong
// everywhere (a generated one, say) gets the first ones and a count.
const maxErrors = 100

// joinSorted joins errs in file order, the first maxErrors of them.
func joinSorted(errs []*Error) error {
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(a.Field, b.Field))
	})
	out := make([]error, 0, min(len(errs), maxErrors+1))
	for _, e := range errs[:min(len(errs), maxErrors)] {
		out = append(out, e)
	}
	if n := len(errs) - maxErrors; n > 0 {
		out = append(out, &Error{Pos: Pos{File: errs[maxErrors].Pos.File},
			Msg: fmt.Sprintf("... and %d more problems; fix these first", n)})
	}
	return errors.Join(out...)
}

// serviceDirs merges the services of every *.yaml and *.yml file in
// c.ServiceDirs (resolved against base) into c.Services, file by file in
// name order. A service defined twice is an error at its second place.
func (d *decoder) serviceDirs(c *Config, base string) {
	for i, written := range c.ServiceDirs {
		if written == "" {
			continue
		}
		dir := written
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			d.errs = append(d.errs, &Error{Pos: d.pos[fmt.Sprintf("service_dirs[%d]", i)], Field: fmt.Sprintf("service_dirs[%d]", i),
				Msg: fmt.Sprintf("cannot read the folder: %v; create it or remove the entry", err)})
			continue
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			d.serviceFile(c, filepath.Join(dir, e.Name()), written)
		}
	}
}

// serviceFile merges one services file; rel is its folder as the config
// wrote it, against which the file's relative paths are resolved (the
// config resolves them against its own folder in turn).
func (d *decoder) serviceFile(c *Config, path, rel string) {
	f, err := os.Open(path)
	if err != nil {
		d.errs = append(d.errs, &Error{Pos: Pos{File: path}, Msg: err.Error()})
		return
	}
	defer f.Close()
	root, err := parseYAML(f, path)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			d.errs = append(d.errs, ce)
		} else {
			d.errs = append(d.errs, &Error{Pos: Pos{File: path}, Msg: err.Error()})
		}
		return
	}
	if root == nil {
		return
	}
	sub := &decoder{file: path, lookup: d.lookup, expand: d.expand, pos: map[string]Pos{}}
	if root.Kind != yaml.MappingNode {
		sub.fail(root, "", nil, "a services file holds a mapping with one key, services:")
		d.errs = append(d.errs, sub.errs...)
		return
	}
	var node *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "services":
			node = v
			continue
		case "version":
			continue // compose's, obsolete there too
		}
		sub.fail(k, k.Value, nil, "unknown key in a services file; it holds only services: (skillgate makes the networks and volumes itself)")
	}
	m := map[string]*Service{}
	if node != nil {
		sub.decode(node, reflect.ValueOf(&m).Elem(), "services")
	}
	d.errs = append(d.errs, sub.errs...)
	for f := range sub.bad {
		if d.bad == nil {
			d.bad = map[string]bool{}
		}
		d.bad[f] = true
	}
	for f := range sub.unknown {
		if d.unknown == nil {
			d.unknown = map[string]bool{}
		}
		d.unknown[f] = true
	}
	for f, raw := range sub.blank {
		if d.blank == nil {
			d.blank = map[string]string{}
		}
		d.blank[f] = raw
	}
	for _, name := range sub.order["services"] {
		s := m[name]
		field := "services." + name
		if _, dup := c.Services[name]; dup {
			prev := d.pos[field]
			d.errs = append(d.errs, &Error{Pos: sub.pos[field], Field: field,
				Msg: fmt.Sprintf("service %q is also defined at %s; rename one of them", name, prev)})
			continue
		}
		if s != nil {
			resolveServicePaths(s, rel)
		}
		if c.Services == nil {
			c.Services = map[string]*Service{}
		}
		c.Services[name] = s
		for k, p := range sub.pos {
			if k == field || strings.HasPrefix(k, field+".") {
				d.pos[k] = p
			}
		}
	}
}

// resolveServicePaths makes a service file's relative paths (build
// context, bind sources) relative to the config's folder instead of the
// file's, dir being the file's folder as the config names it.
func resolveServicePaths(s *Service, dir string) {
	if s.Build != nil && s.Build.Context != "" && !filepath.IsAbs(s.Build.Context) {
		s.Build.Context = filepath.Join(dir, s.Build.Context)
	}
	for i, v := range s.Volumes {
		if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || v == "." || strings.HasPrefix(v, ".:") {
			src, rest, _ := strings.Cut(v, ":")
			abs := filepath.Join(dir, src)
			if rest != "" {
				abs += ":" + rest
			}
			s.Volumes[i] = abs
		}
	}
}
