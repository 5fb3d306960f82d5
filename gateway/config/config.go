package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/pos"

	"gopkg.in/yaml.v3"
)

// Config is a parsed skillgate.yaml. Build one with Default, Parse or Load.
type Config struct {
	// Listen is where the HTTP front end listens.
	Listen Listen `yaml:"listen"`
	// Auth holds the bearer tokens the HTTP front end accepts.
	Auth Auth `yaml:"auth"`
	// Admin says who may call the management tools that change what the
	// gateway runs (admin.go).
	Admin Admin `yaml:"admin"`
	// Names controls how upstream names are namespaced.
	Names Names `yaml:"names"`
	// Disclosure is "all" (every tool listed; the default) or
	// "progressive" (meta-tools plus what a client activated).
	Disclosure string `yaml:"disclosure"`
	// Pinned are tool names or globs (such as "everything__echo" or
	// "github__*") listed on the default endpoint even in progressive mode.
	Pinned []string `yaml:"pinned,flow"`
	// Bundles name sets of activation targets, activated together as @name.
	Bundles map[string]*Bundle `yaml:"bundles"`
	// Profiles are extra endpoints, /mcp/p/<name>, each with a fixed tool set.
	Profiles map[string]*Profile `yaml:"profiles"`
	// Servers are the upstream MCP servers, keyed by name.
	Servers map[string]*Server `yaml:"servers"`
	// ServerOrder holds the keys of Servers in file order.
	ServerOrder []string `yaml:"-"`
	// Tools lists the folders of script and wasm tools.
	Tools Dirs `yaml:"tools"`
	// Pipelines are the YAML pipelines: folders, inline ones and the
	// environment their expressions may read.
	Pipelines Pipelines `yaml:"pipelines"`
	// Skills are the skills (SKILL.md folders): local folders, git
	// repositories, global hooks and how much of a client's context one
	// result may take.
	Skills Skills `yaml:"skills"`
	// Plugins lists the folders of third-party executor binaries.
	Plugins Dirs `yaml:"plugins"`
	// Services are the Docker containers tools depend on, keyed by name.
	Services map[string]*Service `yaml:"services"`
	// Docker holds the settings of services and server containers.
	Docker Docker `yaml:"docker"`
	// ServiceDirs are folders of compose-shaped files (*.yaml, *.yml), each
	// holding a services: map merged into Services; relative paths in a file
	// are resolved against its folder.
	ServiceDirs []string `yaml:"service_dirs,flow"`
	// Executors tunes the built-in executors (mcp, script, wasm), keyed by name.
	Executors map[string]*Executor `yaml:"executors"`
	// Limits are timeouts and caps.
	Limits Limits `yaml:"limits"`
	// Source is the name of the file the config came from.
	Source string `yaml:"-"`
	// Notes are problems that do not stop this run, for the gateway's log
	// at start: settings it does not use that could not be read
	// (ParseForStdio), bundled folders the built-in default did not find.
	Notes []*Error `yaml:"-" json:"-"`

	// pos maps a field path ("servers.x.url") to where it was written.
	pos map[string]Pos
}

// Listen says where the HTTP front end listens and whom it answers.
type Listen struct {
	// HTTP is the host:port to bind; the default is 127.0.0.1:8811.
	HTTP string `yaml:"http"`
	// AllowedOrigins are extra Origin values accepted besides localhost ones.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHosts are extra Host values accepted besides localhost ones.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

// Auth holds the credentials the HTTP front end accepts.
type Auth struct {
	// Tokens are accepted bearer tokens; empty means no authentication.
	Tokens []string `yaml:"tokens"`
}

// Names controls how items from upstreams are named in the catalog.
type Names struct {
	// Separator joins a namespace and a name; the default is "__".
	Separator string `yaml:"separator"`
	// Collisions is the policy when two items get the same name:
	// "prefix" (the default), "priority" or "error".
	Collisions string `yaml:"collisions"`
}

// Dirs is a list of folders to load items from.
type Dirs struct {
	// Dirs are resolved against the config file's folder.
	Dirs []string `yaml:"dirs"`
}

// Skills says where skills come from (see docs/SKILLS.md).
type Skills struct {
	// Dirs are folders of skills, resolved against the config file's folder.
	Dirs []string `yaml:"dirs"`
	// HooksDirs are folders of global hooks (pre.* and post.*), run around
	// every skill's scripts; a skills dir's _hooks folder is one too.
	HooksDirs []string `yaml:"hooks_dirs"`
	// Repos are git repositories of skills, fetched at start and pinned.
	Repos []*SkillRepo `yaml:"repos"`
	// ContextWindow is the client's context window in tokens; the default
	// is 200000.
	ContextWindow int `yaml:"context_window"`
	// ResultShare is the fraction of ContextWindow one result may take,
	// above 0 and at most 1; the default is 0.1.
	ResultShare float64 `yaml:"result_share"`
	// EnvAllow names the variables of the gateway's environment, or
	// prefixes ending in * ("AWS_*"), that skills' scripts may ask for
	// (env: in SKILL.md) although their names look like credentials. A
	// variable holding one of auth.tokens is passed only when named here
	// exactly.
	EnvAllow []string `yaml:"env_allow,flow"`
	// Sandbox says which skills' scripts, own hooks and tools run under
	// the sandbox whatever SKILL.md or tool.yaml says: "required" (every
	// skill's), "repos" (those of git repositories: skills.repos and those
	// added at run time) or "optional" (the default: as they say).
	Sandbox string `yaml:"sandbox"`
}

// Configured reports whether the config serves skills at all.
func (s *Skills) Configured() bool {
	return len(s.Dirs) > 0 || len(s.Repos) > 0 || len(s.HooksDirs) > 0
}

// SkillRepo is a git repository of skills.
type SkillRepo struct {
	// Name labels the repository; the default is the last element of URL
	// without ".git".
	Name string `yaml:"name"`
	// URL is where it is fetched from: https://, ssh://, git@host:path,
	// file:// or a local path (resolved against the config file's folder).
	URL string `yaml:"url"`
	// Ref is the branch, tag or commit hash to pin; "" is the remote's HEAD.
	Ref string `yaml:"ref"`
	// Layout is where the skills are: "auto" (the default: skills/ when the
	// repository has one, else its root), "skills" or "root".
	Layout string `yaml:"layout"`
	// Sandbox is "required" to run this repository's skills' scripts,
	// hooks and tools under the sandbox whatever they say, or "optional"
	// (the default: as skills.sandbox says).
	Sandbox string `yaml:"sandbox"`
}

// Pipelines says where pipelines come from (see docs/PIPELINES.md).
type Pipelines struct {
	// Dirs are folders of *.yaml pipeline files, resolved against the
	// config file's folder. The first one is where the management tools
	// save pipelines.
	Dirs []string `yaml:"dirs"`
	// Inline holds pipelines written in the config itself: a mapping of
	// names to pipelines, or a list of them. It is kept as YAML, unexpanded
	// (expressions read env.NAME instead of ${VAR}), and compiled by the
	// gateway with positions in the config file.
	Inline *yaml.Node `yaml:"inline"`
	// Env names the environment variables pipeline expressions may read as
	// env.NAME; no other variable is visible to them.
	Env []string `yaml:"env,flow"`
}

// Server is an upstream MCP server: a stdio command or a remote URL.
type Server struct {
	// Command starts a stdio server: a name looked up in PATH, or a path.
	// Parse resolves a relative path against the config file's folder,
	// unless Cwd is set (the server's executor resolves it against Cwd).
	Command string `yaml:"command,omitempty"`
	// Args are the command's arguments.
	Args []string `yaml:"args,flow,omitempty"`
	// Env is added to the command's environment.
	Env map[string]string `yaml:"env,omitempty"`
	// SecretEnv names the entries of Env written with a ${VAR} that the
	// environment set, sorted. Their values are secrets: the executor masks
	// them in what it logs and reports of the server.
	SecretEnv []string `yaml:"-" json:"-"`
	// SecretValues are more secrets of the server: the values ${VAR}s gave
	// its command, args, cwd and url that Parse counts as credentials (see
	// secretValues in parse.go), sorted. The executor masks them too.
	SecretValues []string `yaml:"-" json:"-"`
	// EnvPassthrough names variables of the gateway's environment that a
	// stdio server receives as they are set there (a name such as
	// KUBECONFIG, or a prefix ending in * such as AWS_*), on top of those
	// of executors.mcp.env_passthrough and the proxy and TLS variables
	// every stdio server receives; one that is not set is left out. Env
	// replaces them.
	EnvPassthrough []string `yaml:"env_passthrough,flow,omitempty"`
	// Cwd is the command's working folder, resolved against the config file's folder.
	Cwd string `yaml:"cwd,omitempty"`
	// URL is a remote server's endpoint.
	URL string `yaml:"url,omitempty"`
	// Headers are sent with every request to URL.
	Headers map[string]string `yaml:"headers,omitempty"`
	// Transport is "" (chosen from Command or URL), "stdio", "streamable-http" or "sse".
	Transport string `yaml:"transport,omitempty"`
	// Type is how MCP clients (Claude Code, VS Code, Cursor) spell
	// Transport, so that their entries can be pasted as they are: "stdio",
	// "http" or "streamableHttp" (streamable HTTP, falling back to SSE, as
	// Transport "" does for a URL), "streamable-http" or "sse". Parse sets
	// Transport from it; an entry sets one of the two, not both.
	Type string `yaml:"type,omitempty"`
	// Namespace prefixes the server's items; nil means the server's key, "" no prefix.
	Namespace *string `yaml:"namespace,omitempty"`
	// Priority decides name collisions under the "priority" policy; higher wins.
	Priority int `yaml:"priority,omitempty"`
	// Start is "eager" (the default; started with the gateway) or "lazy" (on first use).
	Start string `yaml:"start,omitempty"`
	// Disabled servers are kept in the config but not started.
	Disabled bool `yaml:"disabled,omitempty"`
	// Isolation overrides the mcp executor's: "process" or "inprocess".
	Isolation string `yaml:"isolation,omitempty"`
	// ProtocolVersion pins an upstream MCP revision such as "2025-11-25".
	ProtocolVersion string `yaml:"protocol_version,omitempty"`
	// Timeout overrides limits.request_timeout for this server.
	Timeout Duration `yaml:"timeout,omitempty"`
	// StartTimeout bounds the server's start (launch or connect,
	// initialize, the first listing); 0 is the mcp executor's default
	// (30s, 2m for a package runner such as npx).
	StartTimeout Duration `yaml:"start_timeout,omitempty"`
	// Requires names services that must be healthy before the server starts.
	Requires []string `yaml:"requires,flow,omitempty"`
	// Image runs the server as a container with stdio attached, instead of
	// Command; Args are then the container's command.
	Image string `yaml:"image,omitempty"`
	// Network is an image server's network: "none" (the default) or "bridge".
	Network string `yaml:"network,omitempty"`
	// CPUs, Memory and PIDs limit an image server; zero means the defaults
	// (1 CPU, 512MiB, 256 processes).
	CPUs   CPUs `yaml:"cpus,omitempty"`
	Memory Size `yaml:"memory,omitempty"`
	PIDs   int  `yaml:"pids,omitempty"`
	// Privileged is never allowed; the key exists to say so clearly.
	Privileged bool `yaml:"privileged,omitempty"`
	// Pos is where the entry was defined.
	Pos Pos `yaml:"-"`
	// Problem, set only by ParseForRun and LoadForRun, is why the server
	// cannot start: what is wrong in its entry (a ${VAR} that is not set,
	// an unknown key, a bad value, an invalid name), with file:line. The
	// gateway shows the server failed with it and serves the others.
	Problem error `yaml:"-" json:"-"`
}

// Kind reports how the gateway talks to the server: "stdio", "http" or "sse".
func (s *Server) Kind() string {
	switch {
	case s.Transport == "stdio" || (s.Transport == "" && (s.Command != "" || s.Image != "")):
		return "stdio"
	case s.Transport == "sse":
		return "sse"
	default:
		return "http"
	}
}

// Equal reports whether s and o configure the same server, ignoring Pos.
// A reload keeps a server running when its old and new entries are Equal.
func (s *Server) Equal(o *Server) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Command == o.Command &&
		slices.Equal(s.Args, o.Args) &&
		maps.Equal(s.Env, o.Env) && slices.Equal(s.SecretEnv, o.SecretEnv) && slices.Equal(s.SecretValues, o.SecretValues) &&
		slices.Equal(s.EnvPassthrough, o.EnvPassthrough) &&
		s.Cwd == o.Cwd &&
		s.URL == o.URL &&
		maps.Equal(s.Headers, o.Headers) &&
		s.Transport == o.Transport && s.Type == o.Type &&
		(s.Namespace == nil) == (o.Namespace == nil) &&
		(s.Namespace == nil || *s.Namespace == *o.Namespace) &&
		s.Priority == o.Priority &&
		s.Start == o.Start &&
		s.Disabled == o.Disabled &&
		s.Isolation == o.Isolation &&
		s.ProtocolVersion == o.ProtocolVersion &&
		s.Timeout == o.Timeout && s.StartTimeout == o.StartTimeout &&
		slices.Equal(s.Requires, o.Requires) &&
		s.Image == o.Image && s.Network == o.Network &&
		s.CPUs == o.CPUs && s.Memory == o.Memory && s.PIDs == o.PIDs &&
		s.Privileged == o.Privileged &&
		errText(s.Problem) == errText(o.Problem)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Bundle is a named set of activation targets: server names, tool names or
// globs, and other bundles written @name. Activating the bundle activates
// every target, bundles included, transitively.
type Bundle struct {
	// Description says what the bundle is for; find_tools and activate show it.
	Description string `yaml:"description"`
	// Include lists the targets.
	Include []string `yaml:"include,flow"`
}

// Profile is a named endpoint, /mcp/p/<name>, serving a fixed subset of the
// catalog. A tool belongs to the profile when it comes from one of Servers,
// or matches one of Tools (globs); with neither set, every tool does. Allow,
// when set, then keeps only tools matching one of its globs, and Deny removes
// tools matching any of its globs.
type Profile struct {
	// Description says what the profile is for; `skillgate profiles` shows it.
	Description string `yaml:"description"`
	// Disclosure is the profile's mode: "all" or "progressive"; the default
	// is the top-level disclosure.
	Disclosure string `yaml:"disclosure"`
	// Servers are server names whose tools (and prompts and resources) belong to the profile.
	Servers []string `yaml:"servers,flow"`
	// Skills are skill names whose tools belong to the profile.
	Skills []string `yaml:"skills,flow"`
	// Tools are globs of exposed tool names that belong to the profile.
	Tools []string `yaml:"tools,flow"`
	// Allow, when not empty, keeps only tools matching one of its globs.
	Allow []string `yaml:"allow,flow"`
	// Deny removes tools matching any of its globs; it wins over everything.
	Deny []string `yaml:"deny,flow"`
	// Pinned are tools listed in progressive mode without activation.
	Pinned []string `yaml:"pinned,flow"`
}

// Executor tunes a built-in executor.
type Executor struct {
	// Isolation is "process" (the default) or "inprocess".
	Isolation string `yaml:"isolation"`
	// EnvPassthrough, for the mcp executor only, names the variables of
	// the gateway's environment every stdio server receives (see
	// Server.EnvPassthrough, which adds to them).
	EnvPassthrough []string `yaml:"env_passthrough,flow"`
}

// Limits are timeouts and caps. A zero timeout disables it.
type Limits struct {
	// RequestTimeout bounds a request without progress; the default is 60s.
	RequestTimeout Duration `yaml:"request_timeout"`
	// MaxRequestTimeout bounds a request even while progress arrives; the default is 10m.
	MaxRequestTimeout Duration `yaml:"max_request_timeout"`
	// StallTimeout ends a script that prints nothing for this long; the default is 20s.
	StallTimeout Duration `yaml:"stall_timeout"`
	// ScriptOutputCap is how much script output is kept (the rest is drained); the default is 1MiB.
	ScriptOutputCap Size `yaml:"script_output_cap"`
	// ScriptConcurrency is how many script processes may run at once; the default is 8.
	ScriptConcurrency int `yaml:"script_concurrency"`
	// HTTPBodyCap bounds an HTTP request body; the default is 4MiB.
	HTTPBodyCap Size `yaml:"http_body_cap"`
	// ShutdownGrace is how long a stdio child gets after stdin is closed and
	// SIGTERM sent, before SIGKILL; the default is 5s.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// PluginKillWindow is how long an executor plugin gets to stop what it
	// runs and exit once asked to, before it is killed; the default is 10s.
	// The gateway's own stop gives each source as long to unload. Keep it
	// above shutdown_grace, so that a plugin's stdio servers get their
	// whole grace.
	PluginKillWindow Duration `yaml:"plugin_kill_window"`
	// StartWait is how long an MCP request that comes while the gateway
	// starts (a stdio client's first request always does) waits for every
	// server's first try (tool folders, skills and the pipelines that call
	// no slow server are always waited for), so that the client's first
	// tools/list is complete; the default is 8s. A server still starting then is listed
	// when ready, with a list_changed that some clients ignore. 0 answers
	// at once. Keep it below the clients' connection timeouts (10s for
	// some).
	StartWait Duration `yaml:"start_wait"`
	// LoadTimeout is how long an executor gets to answer the Load of one
	// of its sources (a plugin's, a tool folder's) before that load fails
	// and the executor's process is restarted; the default is 60s. A
	// server's load is bounded by its start_timeout instead (see
	// Server.StartTimeout), which the mcp executor applies itself.
	LoadTimeout Duration `yaml:"load_timeout"`
	// DrainTimeout is how long HTTP requests in flight get to finish when
	// the gateway stops (SIGTERM, Ctrl-C) before their connections are
	// closed; streams that only wait for notifications are closed at
	// once. The default is 5s; 0 closes every connection at once. It is
	// not shutdown_grace, which is the stdio servers' time to exit.
	DrainTimeout Duration `yaml:"drain_timeout"`
	// ShutdownDelay is how long the gateway keeps serving new HTTP
	// requests after SIGTERM or Ctrl-C, with /readyz answering 503
	// ("draining"), before it stops accepting them and drain_timeout
	// begins: time for a load balancer (Kubernetes endpoints) to stop
	// sending it requests. The default is 0 (stop accepting at once); 5s
	// suits Kubernetes. A second signal ends it early.
	ShutdownDelay Duration `yaml:"shutdown_delay"`
	// MaxSessions caps the 2025-11-25-era HTTP sessions alive at once
	// (each holds what its client sent at initialize); past it an
	// initialize gets 503 until sessions end. The default is 10000. It is
	// read when the gateway starts.
	MaxSessions int `yaml:"max_sessions"`
}

// reservedNamespaces are the namespaces of the gateway's own tools.
var reservedNamespaces = []string{"admin", "pipeline", "pipelines", "services", "skill", "tool", "tools"}

// ReservedNamespaces returns the namespaces of the gateway's own tools,
// sorted: its management groups (admin__servers, pipeline__runs, ...),
// tool folders (tools__*) and pipelines (pipelines__*). No server may be
// named after one or use one as its namespace, and no executor plugin's
// file may be named after one: their tools would mix with the gateway's.
func ReservedNamespaces() []string { return slices.Clone(reservedNamespaces) }

// IsReservedNamespace reports whether name is one of ReservedNamespaces.
func IsReservedNamespace(name string) bool { return slices.Contains(reservedNamespaces, name) }

// Default returns a config with every default set and no servers.
func Default() *Config {
	return &Config{
		Listen:     Listen{HTTP: "127.0.0.1:8811"},
		Admin:      Admin{Writes: WritesTrusted},
		Names:      Names{Separator: "__", Collisions: "prefix"},
		Disclosure: "all",
		Servers:    map[string]*Server{},
		Services:   map[string]*Service{},
		Executors:  map[string]*Executor{},
		Bundles:    map[string]*Bundle{},
		Profiles:   map[string]*Profile{},
		Skills:     Skills{ContextWindow: 200_000, ResultShare: 0.1},
		Limits: Limits{
			RequestTimeout:    Duration(60 * time.Second),
			MaxRequestTimeout: Duration(10 * time.Minute),
			StallTimeout:      Duration(20 * time.Second),
			ScriptOutputCap:   1 << 20,
			ScriptConcurrency: 8,
			HTTPBodyCap:       4 << 20,
			ShutdownGrace:     Duration(5 * time.Second),
			PluginKillWindow:  Duration(10 * time.Second),
			StartWait:         Duration(DefaultStartWait),
			LoadTimeout:       Duration(60 * time.Second),
			DrainTimeout:      Duration(5 * time.Second),
			MaxSessions:       10000,
		},
	}
}

// DefaultStartWait is limits.start_wait when the config does not set it:
// long enough for a few node servers on a loaded laptop (~6s), short
// enough that the gateway's start and a client's first request fit in
// the shortest connection timeout of common MCP clients (10s).
const DefaultStartWait = 8 * time.Second

// BuiltinDefault returns the config used when no file is given: Default
// plus the bundled examples, so a bare `skillgate run` serves something
// useful. Each of examples/tools, examples/pipelines, examples/skills and
// examples/plugins is added, relative to the working folder, only if it
// exists; a Note names those of the first three that do not (the
// repository has no examples/plugins). It also federates the reference
// "everything" MCP server, started with npx from the npm registry (the
// first start downloads it).
func BuiltinDefault() *Config {
	c := Default()
	c.Source = "<builtin>"
	var missing []string
	for _, e := range []struct {
		dir      string
		d        *[]string
		optional bool
	}{
		{"examples/tools", &c.Tools.Dirs, false},
		{"examples/pipelines", &c.Pipelines.Dirs, false},
		{"examples/skills", &c.Skills.Dirs, false},
		{"examples/plugins", &c.Plugins.Dirs, true},
	} {
		if fi, err := os.Stat(e.dir); err == nil && fi.IsDir() {
			*e.d = []string{e.dir}
		} else if !e.optional {
			missing = append(missing, e.dir)
		}
	}
	if len(missing) > 0 {
		wd, err := os.Getwd()
		if err != nil {
			wd = "unknown: " + err.Error()
		}
		// A desktop client starts the gateway in /, where none is found.
		c.Notes = append(c.Notes, &Error{Pos: Pos{File: c.Source}, Msg: fmt.Sprintf(
			"no config file given (-c), and the built-in default found no %s in the working folder %s, so it serves "+
				"no bundled examples from them; run skillgate from the repository root, or give a config: -c /path/to/skillgate.yaml",
			strings.Join(missing, ", "), wd)})
	}
	c.Servers = map[string]*Server{
		"everything": {
			Command: "npx",
			Args:    []string{"-y", EverythingPackage, "stdio"},
			Start:   "eager",
		},
	}
	c.ServerOrder = []string{"everything"}
	// The bundled skill pg-reports asks for the Postgres password; the
	// operator allows it here as a config would (skills.env_allow).
	c.Skills.EnvAllow = []string{"PGPASSWORD"}
	return c
}

// EverythingPackage is the reference MCP server the built-in default
// federates, pinned so every machine serves the same tools.
const EverythingPackage = "@modelcontextprotocol/server-everything@2026.8.31"

// Duration is a time.Duration written as "500ms" or "10s".
type Duration time.Duration

// String returns the duration as time.Duration prints it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as "10s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a duration such as "500ms" or "1m30s".
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("%q has no unit; write it as %ss or %sms", s, s, s)
		}
		return fmt.Errorf("%q is not a duration; write it as 500ms, 10s or 1m30s", s)
	}
	*d = Duration(v)
	return nil
}

// Size is a byte count written as 1048576, "512KiB" or "4MiB".
type Size int64

var sizeUnits = []struct {
	suffix string
	n      int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// String returns the size with the largest binary unit that divides it.
func (s Size) String() string {
	for _, u := range sizeUnits[:3] {
		if s != 0 && int64(s)%u.n == 0 {
			return strconv.FormatInt(int64(s)/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MarshalText writes the size as String does.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a byte count with an optional unit: B, KB, MB, GB
// (powers of 1000) or KiB, MiB, GiB (powers of 1024).
func (s *Size) UnmarshalText(b []byte) error {
	str := strings.TrimSpace(string(b))
	num, mult := str, int64(1)
	for _, u := range sizeUnits {
		if len(str) > len(u.suffix) && strings.EqualFold(str[len(str)-len(u.suffix):], u.suffix) {
			num, mult = strings.TrimSpace(str[:len(str)-len(u.suffix)]), u.n
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v > (1<<63-1)/mult || v < -(1<<63-1)/mult {
		return fmt.Errorf("%q is not a size; write it as 1048576, 512KiB or 4MiB", str)
	}
	*s = Size(v * mult)
	return nil
}

// Pos is a place in a config file.
type Pos = pos.Pos
