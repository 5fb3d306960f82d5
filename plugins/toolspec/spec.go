package toolspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/childproc"
)

// Spec is the JSON the gateway sends as LoadRequest.Spec for the kinds
// "script" and "wasm": a loaded tool folder and the limits it runs under.
//
//	{"dir": "/srv/tools/word_count",
//	 "tool": {"name": "word_count", "description": "...", "runtime": "python", "entry": "main.py"},
//	 "limits": {"stall_timeout": "20s", "output_cap": 1048576, "concurrency": 4}}
type Spec struct {
	// Dir is the tool folder's absolute path.
	Dir string `json:"dir"`
	// Tool is the folder's tool.yaml.
	Tool Tool `json:"tool"`
	// Limits are the gateway's limits for this tool; zero values mean the
	// executor's defaults.
	Limits Limits `json:"limits,omitzero"`
	// StateDir is where the tool keeps state between calls (exposed to
	// scripts as SKILLGATE_STATE_DIR). Empty means a directory of the
	// executor's, named after the source.
	StateDir string `json:"state_dir,omitempty"`
	// CacheDir is where dependencies (venv, node_modules) are installed.
	// Empty means a directory of the executor's, named after the source.
	CacheDir string `json:"cache_dir,omitempty"`
	// Environ holds the values of the variables the tool may receive (the
	// names under env and secrets, and the locale, time zone, proxy and TLS
	// variables of SharedEnv), resolved by the gateway from its own
	// environment: an executor running out of process does not inherit it.
	// When Environ is nil, executors look names up in their own
	// environment. Its values are secrets: never log a Spec.
	Environ map[string]string `json:"environ,omitempty"`
}

// SharedEnv names the variables of the gateway's environment every tool
// receives when they are set: locale and time zone, then proxy and TLS
// settings (those only while Limits.NoProxyEnv is false).
var SharedEnv = struct{ Locale, Proxy []string }{
	Locale: []string{"LANG", "LC_ALL", "LC_CTYPE", "TZ"},
	Proxy:  childproc.ProxyEnv, // stdio MCP servers get the same list
}

// ResolveEnviron sets s.Environ from lookup (os.LookupEnv in the gateway):
// the shared variables and the names the tool declares under env and
// secrets. Unset names are left out.
func (s *Spec) ResolveEnviron(lookup func(string) (string, bool)) {
	s.Environ = map[string]string{}
	names := append(append([]string{}, SharedEnv.Locale...), s.Tool.Env...)
	names = append(names, s.Tool.Secrets...)
	if !s.Limits.NoProxyEnv {
		names = append(names, SharedEnv.Proxy...)
	}
	for _, n := range names {
		if v, ok := lookup(n); ok {
			s.Environ[n] = v
		}
	}
}

// Lookup returns a variable the tool may receive: from Environ when the
// gateway resolved it, else from this process's environment.
func (s *Spec) Lookup(name string) (string, bool) {
	if s.Environ != nil {
		v, ok := s.Environ[name]
		return v, ok
	}
	return os.LookupEnv(name)
}

// Limits are what the gateway allows a tool, whatever its tool.yaml says.
type Limits struct {
	// Timeout is the call ceiling for a tool that sets none (default 60s).
	Timeout Duration `json:"timeout,omitzero"`
	// MaxTimeout caps a tool's own timeout; zero means no cap.
	MaxTimeout Duration `json:"max_timeout,omitzero"`
	// StallTimeout is the stall timeout for a tool that sets none
	// (default 20s).
	StallTimeout Duration `json:"stall_timeout,omitzero"`
	// OutputCap is how much of stdout and of stderr is kept per call
	// (default 1 MiB each); the rest is read and dropped.
	OutputCap ByteSize `json:"output_cap,omitzero"`
	// Concurrency caps this tool's calls running at once; zero means only
	// the executor-wide cap applies.
	Concurrency int `json:"concurrency,omitempty"`
	// Interpreters maps a runtime to the argv that runs an entry (the entry
	// and args follow it), e.g. {"python": ["/usr/bin/python3", "-u"]}. It is
	// an allowlist: when set, a runtime it does not name is refused. Nil
	// means the executor's own list.
	Interpreters map[string][]string `json:"interpreters,omitempty"`
	// NoProxyEnv keeps the proxy and TLS variables (HTTP_PROXY,
	// SSL_CERT_FILE, ...) out of the tool's environment.
	NoProxyEnv bool `json:"no_proxy_env,omitempty"`
	// SandboxUser, "UID:GID", runs sandboxed tools as that user. The kernel
	// does not apply ulimits.processes to root, so a gateway running as
	// root should set it (e.g. "65534:65534") for tools that use the
	// sandbox; the tool folder must then be readable by that user.
	SandboxUser string `json:"sandbox_user,omitempty"`
}

// ParseSpec decodes a Spec strictly (unknown keys are errors) and validates
// it: Dir must be absolute and the tool valid, with its entry inside Dir.
// Problems come back together in an *Error.
func ParseSpec(raw []byte) (*Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, &Error{Problems: []Problem{{Msg: fmt.Sprintf("spec is not valid JSON for a tool: %v", err)}}}
	}
	if dec.More() {
		return nil, &Error{Problems: []Problem{{Msg: "spec holds more than one JSON value"}}}
	}
	var p problems
	switch {
	case s.Dir == "":
		p.at("dir", "missing; the gateway sends the tool folder's absolute path")
	case !filepath.IsAbs(s.Dir):
		p.at("dir", "%q is not absolute", s.Dir)
	default:
		if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
			p.at("dir", "%q is not a directory", s.Dir)
		}
	}
	s.Tool.validate(&p)
	if len(p.list) == 0 {
		s.Tool.checkFiles(s.Dir, &p)
	}
	if s.Limits.Concurrency < 0 {
		p.at("limits.concurrency", "must not be negative")
	}
	for rt, argv := range s.Limits.Interpreters {
		if len(argv) == 0 && rt != RuntimeExec {
			p.at("limits.interpreters."+rt, "empty; give the interpreter's path, e.g. [\"/usr/bin/python3\"]")
		}
	}
	if u := s.Limits.SandboxUser; u != "" {
		if _, _, err := s.Limits.SandboxIDs(); err != nil {
			p.at("limits.sandbox_user", "%q is not UID:GID (numbers, e.g. 65534:65534)", u)
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return &s, nil
}

// SandboxIDs returns SandboxUser's numbers.
func (l Limits) SandboxIDs() (uid, gid uint32, err error) {
	u, g, found := strings.Cut(l.SandboxUser, ":")
	if !found {
		return 0, 0, fmt.Errorf("want UID:GID, got %q", l.SandboxUser)
	}
	a, err1 := strconv.ParseUint(u, 10, 32)
	b, err2 := strconv.ParseUint(g, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("want UID:GID, got %q", l.SandboxUser)
	}
	return uint32(a), uint32(b), nil
}
