package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/graph"
	"github.com/skillgate/skillgate/internal/names"
	"github.com/skillgate/skillgate/internal/redact"
)

var (
	profileRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })
	separatorRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,8}$`) })
	revisionRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })
	passNameRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`) })
)

// clientTypes maps the values of a server's type, as MCP clients write
// it, to the transport they mean. "http" is streamable HTTP falling back
// to SSE, as VS Code does and as transport "" does for a URL.
var clientTypes = map[string]string{
	"stdio": "stdio", "http": "", "streamableHttp": "", "streamable-http": "streamable-http", "sse": "sse",
}

// Validate checks the whole config and returns every problem as *Error
// values joined with errors.Join, in file order, or nil.
func (c *Config) Validate() error {
	if v := c.validate(); len(v.errs) > 0 {
		return joinSorted(v.errs)
	}
	return nil
}

type validator struct {
	c      *Config
	errs   []*Error
	scopes map[*Error]scope
}

// scope says which decode problems make a validation problem a mere echo
// of them, for Parse to leave it out. By default it is any problem in the
// field or inside it.
type scope struct {
	// entry marks a problem with a whole entry (servers.x) that is about
	// only its keys listed in keys, or about its name when there are none;
	// a problem in another key leaves it standing.
	entry bool
	keys  []string
	// unset names the entry in which the problem is a required key that is
	// not set: an unknown key there is likely that key misspelt.
	unset string
}

func (v *validator) errorf(field, format string, args ...any) *Error {
	e := &Error{Pos: v.c.where(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	v.errs = append(v.errs, e)
	return e
}

func (v *validator) rescope(e *Error, set func(*scope)) *Error {
	if v.scopes == nil {
		v.scopes = map[*Error]scope{}
	}
	sc := v.scopes[e]
	set(&sc)
	v.scopes[e] = sc
	return e
}

// about marks e as a problem with the entry at its field that concerns
// only the given keys of it (none: its name).
func (v *validator) about(e *Error, keys ...string) *Error {
	return v.rescope(e, func(sc *scope) { sc.entry, sc.keys = true, keys })
}

// unset marks e as a required key not set in the entry at field entry.
func (v *validator) unset(e *Error, entry string) *Error {
	return v.rescope(e, func(sc *scope) { sc.unset = entry })
}

// oneOf checks val against allowed; "" passes only if allowed holds it.
func (v *validator) oneOf(field, val string, allowed ...string) {
	if slices.Contains(allowed, val) {
		return
	}
	var show []string
	for _, a := range allowed {
		if a != "" {
			show = append(show, a)
		}
	}
	hint := "use " + strings.Join(show[:len(show)-1], ", ") + " or " + show[len(show)-1]
	if slices.Contains(allowed, "") {
		hint += " (or leave it out)"
	}
	v.errorf(field, "unknown value %q; %s", val, hint)
}

func (c *Config) validate() *validator {
	v := &validator{c: c}

	// Any host is fine: binding beyond loopback is the user's call.
	if _, port, err := net.SplitHostPort(c.Listen.HTTP); err != nil {
		v.errorf("listen.http", "%q is not host:port; write it as 127.0.0.1:8811 (or :8811 for every interface)", c.Listen.HTTP)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		v.errorf("listen.http", "port %q of %q is not a number from 0 to 65535", port, c.Listen.HTTP)
	}
	for i, o := range c.Listen.AllowedOrigins {
		u, err := url.Parse(o)
		if o != "*" && (err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "") {
			v.errorf(fmt.Sprintf("listen.allowed_origins[%d]", i), "%q is not an origin; write scheme://host[:port] such as https://app.example.com, or * for any", o)
		}
	}
	for i, h := range c.Listen.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			v.errorf(fmt.Sprintf("listen.allowed_hosts[%d]", i), "%q is not a host; write a host name, optionally with :port, such as gateway.example.com", h)
		}
	}
	for i, t := range c.Auth.Tokens {
		switch {
		case t == "":
			v.errorf(fmt.Sprintf("auth.tokens[%d]", i), "empty token; set a value or remove the entry")
		case strings.TrimSpace(t) == "":
			// Go trims the spaces around a header's value: no request matches.
			v.errorf(fmt.Sprintf("auth.tokens[%d]", i), "the token is only spaces, which no request can send (the spaces around a header's value "+
				"are dropped); set a value or remove the entry")
		}
	}
	if !separatorRe().MatchString(c.Names.Separator) {
		v.errorf("names.separator", "%q must be 1-8 letters, digits, _ or -; the default is __", c.Names.Separator)
	}
	v.oneOf("names.collisions", c.Names.Collisions, "prefix", "priority", "error")
	v.oneOf("disclosure", c.Disclosure, "progressive", "all")

	for _, name := range c.serverNames() {
		v.server(name, c.Servers[name])
	}
	for _, d := range []struct {
		field string
		dirs  []string
	}{{"tools", c.Tools.Dirs}, {"pipelines", c.Pipelines.Dirs}, {"skills", c.Skills.Dirs}, {"plugins", c.Plugins.Dirs}} {
		for i, p := range d.dirs {
			if p == "" {
				v.errorf(fmt.Sprintf("%s.dirs[%d]", d.field, i), "empty folder name; remove the entry or name a folder")
			}
		}
	}
	v.skills()
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		v.service(name, c.Services[name])
	}
	v.docker()
	for _, name := range slices.Sorted(maps.Keys(c.Executors)) {
		f := "executors." + name
		if !slices.Contains([]string{"mcp", "script", "wasm"}, name) {
			v.about(v.errorf(f, "unknown executor %q; the built-in executors are mcp, script and wasm", name))
			continue
		}
		if e := c.Executors[name]; e != nil {
			v.oneOf(f+".isolation", e.Isolation, "", "process", "inprocess")
			if name == "mcp" {
				v.passthrough(f+".env_passthrough", e.EnvPassthrough)
			} else if len(e.EnvPassthrough) > 0 {
				v.errorf(f+".env_passthrough", "env_passthrough is for the mcp executor (stdio servers) only; "+
					"a tool names the variables it receives in its tool.yaml (env:, secrets:)")
			}
		}
	}
	v.limits(&c.Limits)
	v.disclosure()
	v.admin()
	return v
}

func (v *validator) server(name string, s *Server) {
	f := "servers." + name
	if !names.Valid(name) {
		v.about(v.errorf(f, "server name %q must be 1-64 letters, digits, _ or -; rename it", name))
	} else if IsReservedNamespace(name) {
		v.about(v.errorf(f, "server name %q is taken by the gateway's own tools (%s%s*); rename the server (the reserved names are %s)",
			name, name, v.c.Names.Separator, strings.Join(reservedNamespaces, ", ")))
	}
	if s == nil {
		s = &Server{}
	}
	// The checks of the transport name the key the entry wrote it with.
	tkey, tval := "transport", s.Transport
	if _, both := v.c.pos[f+".transport"]; s.Type != "" && both {
		v.errorf(f+".type", "both type and transport are set; type is how MCP clients spell transport, so keep one of them")
	} else if s.Type != "" {
		tkey, tval = "type", s.Type
	}
	remote := tval == "streamable-http" || tval == "sse" || (tkey == "type" && (tval == "http" || tval == "streamableHttp"))
	switch {
	case s.Command == "" && s.URL == "" && s.Image == "":
		e := v.errorf(f, "neither command, url nor image is set; add command: to start a stdio server, url: to reach a remote one, or image: to run one in a container")
		v.unset(v.about(e, "command", "url", "image"), f)
	case s.Command != "" && s.URL != "":
		v.about(v.errorf(f, "both command and url are set; keep command for a stdio server or url for a remote one"), "command", "url")
	case s.Image != "" && (s.Command != "" || s.URL != ""):
		v.errorf(f+".image", "image is set with command or url; an image server runs its image (give its arguments in args:), so keep one of them")
	case s.Command != "" || s.Image != "":
		if flagLike(s.Command) {
			v.errorf(f+".command", "%q looks like an option, not a program; name the program to run", s.Command)
		}
		if len(s.Headers) > 0 {
			v.errorf(f+".headers", "headers are for url servers only; remove them")
		}
		if remote {
			v.errorf(f+"."+tkey, "%s %s needs url, not command; use stdio or leave %s out", tkey, tval, tkey)
		}
	default:
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf(f+".url", "%q is not an http(s) URL; write it as http://host:port/path", redact.URL(s.URL))
		}
		v.headers(f, s.Headers)
		for key, set := range map[string]bool{"args": len(s.Args) > 0, "env": len(s.Env) > 0, "cwd": s.Cwd != ""} {
			if set {
				v.errorf(f+"."+key, "%s is for command servers only; remove it", key)
			}
		}
		if tval == "stdio" {
			remotes := "streamable-http or sse"
			if tkey == "type" {
				remotes = "http or sse"
			}
			v.errorf(f+"."+tkey, "%s stdio needs command, not url; use %s, or leave %s out", tkey, remotes, tkey)
		}
	}
	if tkey == "type" {
		if _, ok := clientTypes[s.Type]; !ok {
			v.errorf(f+".type", "unknown value %q; use stdio, http, streamable-http or sse (or leave it out: command means stdio, url streamable HTTP)", s.Type)
		}
	} else {
		v.oneOf(f+".transport", s.Transport, "", "stdio", "streamable-http", "sse")
	}
	v.serverImage(f, s)
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\n\r\x00") {
			v.errorf(f+".env", "%q is not a variable name: an environment cannot hold a name with =, a line break or NUL; rename it", k)
		}
	}
	if len(s.EnvPassthrough) > 0 && (s.Command == "" || s.Image != "") {
		v.errorf(f+".env_passthrough", "env_passthrough is for command servers only; give an image or url server "+
			"the variables it needs under env: (NAME: ${NAME}) or headers:")
	}
	v.passthrough(f+".env_passthrough", s.EnvPassthrough)
	if s.Namespace != nil && *s.Namespace != "" && !names.Valid(*s.Namespace) {
		v.errorf(f+".namespace", `%q must be 1-64 letters, digits, _ or - (or "" for no prefix)`, *s.Namespace)
	} else if s.Namespace != nil && IsReservedNamespace(*s.Namespace) {
		v.errorf(f+".namespace", "%q is the namespace of the gateway's own tools (%s%s*); choose another (the reserved names are %s)",
			*s.Namespace, *s.Namespace, v.c.Names.Separator, strings.Join(reservedNamespaces, ", "))
	}
	v.oneOf(f+".start", s.Start, "", "eager", "lazy")
	v.oneOf(f+".isolation", s.Isolation, "", "process", "inprocess")
	if s.ProtocolVersion != "" && !revisionRe().MatchString(s.ProtocolVersion) {
		v.errorf(f+".protocol_version", "%q is not an MCP revision; write a date such as 2025-11-25", s.ProtocolVersion)
	}
	if s.StartTimeout < 0 {
		v.errorf(f+".start_timeout", "%s is negative; use a positive duration such as 30s (or leave it out for the default)", s.StartTimeout)
	}
	if s.Timeout < 0 {
		v.errorf(f+".timeout", "%s is negative; use a positive duration such as 30s", s.Timeout)
	}
	for i, r := range s.Requires {
		if _, ok := v.c.Services[r]; !ok {
			v.errorf(fmt.Sprintf("%s.requires[%d]", f, i), "unknown service %q; define it under services: or remove it", r)
		}
	}
}

func (v *validator) limits(l *Limits) {
	for _, d := range []struct {
		key string
		val Duration
	}{
		{"request_timeout", l.RequestTimeout}, {"max_request_timeout", l.MaxRequestTimeout},
		{"stall_timeout", l.StallTimeout}, {"shutdown_grace", l.ShutdownGrace},
		{"plugin_kill_window", l.PluginKillWindow}, {"start_wait", l.StartWait}, {"drain_timeout", l.DrainTimeout},
		{"shutdown_delay", l.ShutdownDelay}, {"load_timeout", l.LoadTimeout},
	} {
		if d.val < 0 {
			v.errorf("limits."+d.key, "%s is negative; use a positive duration, or 0 to disable it", d.val)
		}
	}
	if l.RequestTimeout > 0 && l.MaxRequestTimeout > 0 && l.RequestTimeout > l.MaxRequestTimeout {
		v.errorf("limits.request_timeout", "%s is above max_request_timeout %s; lower it or raise max_request_timeout", l.RequestTimeout, l.MaxRequestTimeout)
	}
	for _, n := range []struct {
		key string
		val int64
	}{
		{"script_output_cap", int64(l.ScriptOutputCap)}, {"script_concurrency", int64(l.ScriptConcurrency)},
		{"http_body_cap", int64(l.HTTPBodyCap)}, {"max_sessions", int64(l.MaxSessions)},
	} {
		if n.val <= 0 {
			v.errorf("limits."+n.key, "%d is not positive; use a value above 0", n.val)
		}
	}
}

// passthrough checks the entries of an env_passthrough list: variable
// names, or prefixes ending in *.
func (v *validator) passthrough(field string, list []string) {
	for i, n := range list {
		if !passNameRe().MatchString(n) {
			v.errorf(fmt.Sprintf("%s[%d]", field, i), "%q is not a variable name or prefix; write a name such as KUBECONFIG, "+
				"or a prefix ending in * such as AWS_*", n)
		}
	}
}

// minTokenLen is the length under which an auth token is warned about:
// a short one can be guessed.
const minTokenLen = 16

// injectionVars are variables that make a program load or run other code
// (the dynamic loader's, Node's, Python's, Perl's, Ruby's, the JVM's, a
// shell's startup file), and injectionPrefixes prefixes of such: passed
// from the gateway's environment, whoever set them there runs code in
// every stdio server.
var (
	injectionVars = []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP",
		"PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "BASH_ENV", "ENV"}
	injectionPrefixes = []string{"DYLD_", "LD_"}
)

// riskWarnings returns what a valid config passes to its servers or
// accepts that weakens it: an env_passthrough prefix of one or two
// characters (A* passes AWS_SECRET_ACCESS_KEY along with the rest), a
// loader or interpreter variable passed through (LD_PRELOAD, NODE_OPTIONS,
// DYLD_*), an auth token shorter than minTokenLen.
func (c *Config) riskWarnings() []*Error {
	var out []*Error
	warn := func(field, format string, args ...any) {
		out = append(out, &Error{Pos: c.where(field), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	for i, t := range c.Auth.Tokens {
		if n := len(strings.TrimSpace(t)); n > 0 && n < minTokenLen {
			warn(fmt.Sprintf("auth.tokens[%d]", i), "the token is %d characters, short enough to guess; use at least %d random ones "+
				"(openssl rand -hex 32)", n, minTokenLen)
		}
	}
	lists := map[string][]string{}
	if e := c.Executors["mcp"]; e != nil {
		lists["executors.mcp.env_passthrough"] = e.EnvPassthrough
	}
	for _, name := range c.serverNames() {
		if s := c.Servers[name]; s != nil {
			lists["servers."+name+".env_passthrough"] = s.EnvPassthrough
		}
	}
	for _, f := range slices.Sorted(maps.Keys(lists)) {
		for i, n := range lists[f] {
			field := fmt.Sprintf("%s[%d]", f, i)
			prefix, isPrefix := strings.CutSuffix(n, "*")
			if isPrefix && len(prefix) <= 2 {
				warn(field, "%q passes every variable of the gateway's environment that starts with %q, credentials of other services "+
					"among them; name the variables, or a longer prefix such as AWS_*", n, prefix)
				continue
			}
			if loader := injects(prefix, isPrefix); loader != "" {
				warn(field, "%s makes the server load or run code that whoever sets %s in the gateway's environment chooses; "+
					"set what the server needs under env: instead", n, loader)
			}
		}
	}
	return out
}

// injects returns the loader or interpreter variable that the
// env_passthrough entry name (a prefix when isPrefix) passes, or "".
func injects(name string, isPrefix bool) string {
	for _, v := range injectionVars {
		if v == name || (isPrefix && strings.HasPrefix(v, name)) {
			return v
		}
	}
	for _, p := range injectionPrefixes {
		if strings.HasPrefix(name, p) || (isPrefix && strings.HasPrefix(p, name)) {
			return p + "*"
		}
	}
	return ""
}

// serverNames returns the server keys in file order, then any others sorted.
func (c *Config) serverNames() []string {
	names := make([]string, 0, len(c.Servers))
	seen := map[string]bool{}
	for _, n := range slices.Concat(c.ServerOrder, slices.Sorted(maps.Keys(c.Servers))) {
		if _, ok := c.Servers[n]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

// Where returns where field (such as "profiles.ops.skills[0]") was
// written, or the position of its closest parent that has one, or just
// the file; for problems found after loading, such as a profile's skill
// that no skills dir holds.
func (c *Config) Where(field string) Pos { return c.where(field) }

// where returns the position of field, or of its closest parent that has one.
func (c *Config) where(field string) Pos {
	for f := field; f != ""; {
		if p, ok := c.pos[f]; ok {
			return p
		}
		if name, ok := strings.CutPrefix(f, "servers."); ok && c.Servers[name] != nil && c.Servers[name].Pos != (Pos{}) {
			return c.Servers[name].Pos
		}
		if name, ok := strings.CutPrefix(f, "services."); ok && c.Services[name] != nil && c.Services[name].Pos != (Pos{}) {
			return c.Services[name].Pos
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return Pos{File: c.Source}
}

// disclosure checks pinned tools, bundles and profiles.
func (v *validator) disclosure() {
	c := v.c
	v.globs("pinned", c.Pinned)
	for _, name := range slices.Sorted(maps.Keys(c.Bundles)) {
		f := "bundles." + name
		if !names.Valid(name) {
			v.about(v.errorf(f, "bundle name %q must be 1-64 letters, digits, _ or -; rename it", name))
		}
		b := c.Bundles[name]
		if len(b.Include) == 0 {
			v.unset(v.errorf(f+".include", "the bundle includes nothing; list servers, tools or @bundles under include:"), f)
		}
		for i, t := range b.Include {
			fi := fmt.Sprintf("%s.include[%d]", f, i)
			switch {
			case strings.HasPrefix(t, "@"):
				if _, ok := c.Bundles[t[1:]]; !ok {
					v.errorf(fi, "unknown bundle %q; define it under bundles: or remove it", t)
				}
			case t == "" || strings.ContainsAny(t, " \t"):
				v.errorf(fi, "%q is not a target; write a server name, a tool name or glob, or @bundle", t)
			default:
				if _, err := path.Match(t, ""); err != nil {
					v.errorf(fi, "%q is not a valid glob: %v", t, err)
				}
			}
		}
	}
	if cycle := bundleCycle(c.Bundles); cycle != nil {
		v.about(v.errorf("bundles."+cycle[0], "bundles include each other in a cycle: %s; remove one of these includes", "@"+strings.Join(cycle, " -> @")), "include")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Profiles)) {
		f := "profiles." + name
		if !profileRe().MatchString(name) {
			v.about(v.errorf(f, "profile name %q must be 1-64 lower-case letters, digits, _ or -, starting with a letter or digit (it is a URL path segment); rename it", name))
		}
		p := c.Profiles[name]
		v.oneOf(f+".disclosure", p.Disclosure, "", "progressive", "all")
		for i, s := range p.Servers {
			if _, ok := c.Servers[s]; !ok {
				v.errorf(fmt.Sprintf("%s.servers[%d]", f, i), "unknown server %q; the servers are %s", s, quoteList(c.serverNames()))
			}
		}
		for i, s := range p.Skills {
			// A skill name, or a team skill's ID (team/name).
			if team, name, ok := strings.Cut(s, "/"); !names.Valid(team) || ok && !names.Valid(name) {
				v.errorf(fmt.Sprintf("%s.skills[%d]", f, i), "%q is not a skill name or ID (a name, or team/name for a team's skill)", s)
			} else if !c.Skills.Configured() {
				v.errorf(fmt.Sprintf("%s.skills[%d]", f, i), "no skill %q: the config serves no skills; add the folder that holds it under skills: {dirs: [...]}, or remove the entry", s)
			}
		}
		v.globs(f+".tools", p.Tools)
		v.globs(f+".allow", p.Allow)
		v.globs(f+".deny", p.Deny)
		v.globs(f+".pinned", p.Pinned)
	}
}

func (v *validator) globs(field string, globs []string) {
	for i, g := range globs {
		fi := fmt.Sprintf("%s[%d]", field, i)
		if g == "" {
			v.errorf(fi, "empty entry; write a tool name or glob such as github__*, or remove it")
		} else if _, err := path.Match(g, ""); err != nil {
			v.errorf(fi, "%q is not a tool name or glob such as github__*: %v", g, err)
		}
	}
}

// bundleCycle returns the bundles of one include cycle, starting and ending
// with the same name, or nil.
func bundleCycle(bundles map[string]*Bundle) []string {
	return graph.Cycle(slices.Sorted(maps.Keys(bundles)), func(n string) []string {
		var deps []string
		if b := bundles[n]; b != nil {
			for _, t := range b.Include {
				if dep, ok := strings.CutPrefix(t, "@"); ok && bundles[dep] != nil {
					deps = append(deps, dep)
				}
			}
		}
		return deps
	})
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "none (add servers: first)"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
