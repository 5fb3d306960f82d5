package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Transport names accepted in Spec.Transport.
const (
	TransportAuto           = ""
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// Start modes accepted in Spec.Start.
const (
	// StartEager starts the upstream in Load and keeps it running.
	StartEager = "eager"
	// StartLazy starts the upstream in Load only to list its definitions,
	// stops it, and starts it again on the first Call.
	StartLazy = "lazy"
)

// DefaultShutdownGrace is how long a stdio upstream gets to exit after its
// stdin is closed before it is killed. It fits in the plugin host's
// default kill window (host.DefaultKillWindow, 10 s), so that out of
// process the whole grace passes before the gateway kills the executor; a
// longer grace is shortened to the time the executor has to stop (see
// Executor.Shutdown and Executor.Unload).
const DefaultShutdownGrace = 5 * time.Second

// Spec is the JSON spec of an "mcp" source (LoadRequest.Spec): one MCP server,
// launched as a child process (Command) or reached over HTTP (URL). The keys
// are the ones users already write for Claude Desktop, Claude Code and Cursor.
// Unknown keys are an error.
type Spec struct {
	// Command is the program of a stdio server. It is run directly (no shell);
	// a name without a slash is looked up in the child's PATH (on Windows
	// with the extensions of PATHEXT: "npx" is npx.cmd, run under cmd.exe
	// with its arguments quoted, see childproc.WrapBatch).
	Command string `json:"command,omitempty"`
	// Args are the program's arguments.
	Args []string `json:"args,omitempty"`
	// Env is added to the child's environment, which otherwise holds only
	// PATH, HOME, TMPDIR and LANG from the executor's own environment (on
	// Windows also SystemRoot, PATHEXT, APPDATA and the like: see
	// childproc.Env) and Environ. The values of entries named like a credential
	// (redact.CredentialName) are masked in what the executor shows.
	Env map[string]string `json:"env,omitempty"`
	// Environ holds the variables of the gateway's environment the child
	// receives: those of childproc.ProxyEnv (proxies, certificates to
	// trust) and those the server's env_passthrough names, as the gateway
	// resolved them (an executor out of process does not inherit the
	// gateway's environment). Env replaces them. Like Env's, the values of
	// entries named like a credential are masked in what the executor shows.
	Environ map[string]string `json:"environ,omitempty"`
	// Cwd is the child's working directory; a relative Command with a slash is
	// resolved against it.
	Cwd string `json:"cwd,omitempty"`

	// URL is the endpoint of a remote server (streamable HTTP or legacy SSE).
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request (e.g. Authorization).
	Headers map[string]string `json:"headers,omitempty"`
	// Secrets are more values to mask wherever the executor shows what the
	// upstream wrote or answered (see Spec.Env and Spec.Headers for the
	// values it masks on its own). The gateway lists here the values of the
	// server's env entries written with a ${VAR} reference, and what ${VAR}s
	// gave its command, args, cwd and url where they count as credentials
	// (config.Server.SecretValues). Values shorter than redact.MinSecret are
	// not masked.
	Secrets []string `json:"secrets,omitempty"`

	// Transport is "" (stdio for Command; streamable HTTP falling back to SSE
	// for URL), "stdio", "streamable-http" or "sse".
	Transport string `json:"transport,omitempty"`
	// ProtocolVersion pins the MCP revision spoken with the upstream. Empty
	// means 2025-11-25, under which servers may still ask the client for
	// sampling, elicitation and roots. "2026-07-28" on an HTTP server falls
	// back to 2025-11-25 when the server does not offer it.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Start is "eager" (default) or "lazy".
	Start string `json:"start,omitempty"`
	// Timeout bounds every call forwarded to the upstream ("30s"); zero means
	// only the caller's context bounds it.
	Timeout Duration `json:"timeout,omitzero"`
	// StartTimeout bounds starting the upstream: launching or connecting,
	// the initialize handshake and listing its definitions. Zero means the
	// default (see DefaultStartTimeout and SlowStartTimeout).
	StartTimeout Duration `json:"start_timeout,omitzero"`
	// ShutdownGrace is how long a stdio upstream gets to exit before it is
	// killed (default 5s): stdin is closed, SIGTERM goes to its process group
	// and its other descendants halfway through, SIGKILL at the end. It is
	// shortened when the executor must stop sooner (see DefaultShutdownGrace).
	ShutdownGrace Duration `json:"shutdown_grace,omitzero"`
}

// DefaultStartTimeout is how long an upstream gets to start (see
// Spec.StartTimeout) unless its command is a package runner.
const DefaultStartTimeout = 30 * time.Second

// SlowStartTimeout is how long an upstream gets to start when its command
// is a package runner (npx, uvx, docker, ...), which may first download
// the server: a first `npx -y` of a package can take minutes.
const SlowStartTimeout = 2 * time.Minute

// packageRunners are commands that may download a server before running
// it; their upstreams get SlowStartTimeout.
var packageRunners = map[string]bool{
	"npx": true, "pnpx": true, "bunx": true, "uvx": true, "pipx": true, "uv": true,
	"pnpm": true, "yarn": true, "bun": true, "deno": true, "docker": true, "podman": true,
}

// startTimeout is how long the upstream gets to start.
func (s *Spec) startTimeout() time.Duration {
	if s.StartTimeout > 0 {
		return time.Duration(s.StartTimeout)
	}
	if s.Command != "" && packageRunners[strings.TrimSuffix(filepath.Base(s.Command), ".cmd")] {
		return SlowStartTimeout
	}
	return DefaultStartTimeout
}

// Duration is a time.Duration written as a Go duration string ("1m30s").
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string like \"30s\", got %s", b)
	}
	if s == "" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration string like \"30s\": %w", err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// ParseSpec decodes and validates a spec. Every problem is reported (unknown
// keys, values of the wrong type, invalid combinations), joined into one
// error that wraps sdk.ErrInvalidSpec.
func ParseSpec(raw json.RawMessage) (*Spec, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: empty spec: set command (a stdio server) or url (a remote server)", sdk.ErrInvalidSpec)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", sdk.ErrInvalidSpec, err)
	}
	var s Spec
	var errs []string
	fields := s.fields()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dst, ok := fields[k]
		if !ok {
			errs = append(errs, fmt.Sprintf("unknown key %q", k))
			continue
		}
		if err := json.Unmarshal(m[k], dst); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	if err := s.validate(errs); err != nil {
		return nil, err
	}
	return &s, nil
}

// fields maps each JSON key of a Spec to its field.
func (s *Spec) fields() map[string]any {
	return map[string]any{
		"command": &s.Command, "args": &s.Args, "env": &s.Env, "environ": &s.Environ, "cwd": &s.Cwd,
		"url": &s.URL, "headers": &s.Headers, "secrets": &s.Secrets, "transport": &s.Transport,
		"protocol_version": &s.ProtocolVersion, "start": &s.Start,
		"timeout": &s.Timeout, "start_timeout": &s.StartTimeout, "shutdown_grace": &s.ShutdownGrace,
	}
}

// Validate checks the spec and fills in defaults. It returns every problem
// at once, joined into one error that wraps sdk.ErrInvalidSpec.
func (s *Spec) Validate() error { return s.validate(nil) }

func (s *Spec) validate(errs []string) error {
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	switch s.Transport {
	case TransportAuto, TransportStdio, TransportStreamableHTTP, TransportSSE:
	default:
		bad("transport %q is not one of stdio, streamable-http, sse (or empty for auto)", s.Transport)
	}
	switch {
	case s.Command == "" && s.URL == "":
		bad("set command (a stdio server) or url (a remote server)")
	case s.Command != "" && s.URL != "":
		bad("set command or url, not both")
	case s.Command != "":
		if s.Transport != TransportAuto && s.Transport != TransportStdio {
			bad("transport %q needs url, not command", s.Transport)
		}
		if len(s.Headers) > 0 {
			bad("headers apply to url servers only")
		}
		if s.Cwd != "" {
			if fi, err := os.Stat(s.Cwd); err != nil {
				bad("cwd: %v", err)
			} else if !fi.IsDir() {
				bad("cwd %q is not a directory", s.Cwd)
			}
		}
		for _, env := range []struct {
			key  string
			vars map[string]string
		}{{"env", s.Env}, {"environ", s.Environ}} {
			for k := range env.vars {
				if k == "" || strings.ContainsAny(k, "=\x00") {
					bad("%s name %q is not valid", env.key, k)
				}
			}
		}
	case s.URL != "":
		if s.Transport == TransportStdio {
			bad("transport stdio needs command, not url")
		}
		if len(s.Args) > 0 || len(s.Env) > 0 || len(s.Environ) > 0 || s.Cwd != "" {
			bad("args, env, environ and cwd apply to command servers only")
		}
		u, err := url.Parse(s.URL)
		if err != nil {
			bad("url: %v", err)
		} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url %q must be an absolute http:// or https:// URL", s.URL)
		}
	}
	if s.ProtocolVersion != "" && !slices.Contains(mcpgo.ValidProtocolVersions, s.ProtocolVersion) {
		bad("protocol_version %q is not one of %s", s.ProtocolVersion, strings.Join(mcpgo.ValidProtocolVersions, ", "))
	}
	switch s.Start {
	case "":
		s.Start = StartEager
	case StartEager, StartLazy:
	default:
		bad("start %q is not eager or lazy", s.Start)
	}
	if s.Timeout < 0 {
		bad("timeout must not be negative")
	}
	if s.StartTimeout < 0 {
		bad("start_timeout must not be negative")
	}
	switch {
	case s.ShutdownGrace < 0:
		bad("shutdown_grace must not be negative")
	case s.ShutdownGrace == 0:
		s.ShutdownGrace = Duration(DefaultShutdownGrace)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", sdk.ErrInvalidSpec, strings.Join(errs, "; "))
}

// transport returns the transport to use, with auto resolved to stdio for
// command servers and streamable HTTP (with an SSE fall back) for URLs.
func (s *Spec) transport() string {
	if s.Transport != TransportAuto {
		return s.Transport
	}
	if s.Command != "" {
		return TransportStdio
	}
	return TransportStreamableHTTP
}

// sameAs reports whether two specs describe the same upstream.
func (s *Spec) sameAs(o *Spec) bool {
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}
