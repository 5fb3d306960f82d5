package toolspec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FileName is the name of a tool folder's definition file.
const FileName = "tool.yaml"

// Runtimes accepted in Tool.Runtime.
const (
	RuntimePython = "python"
	RuntimeNode   = "node"
	RuntimeBash   = "bash"
	RuntimeRuby   = "ruby"
	// RuntimeExec runs the entry itself, which must be executable.
	RuntimeExec = "exec"
	// RuntimeWasm runs the entry as a WebAssembly module (plugins/wasm).
	RuntimeWasm = "wasm"
)

// Protocols accepted in Tool.Protocol.
const (
	// ProtocolSimple passes the arguments as JSON on stdin and reads the
	// result from stdout.
	ProtocolSimple = "simple"
	// ProtocolJSONRPC speaks newline-delimited JSON-RPC 2.0 on stdin/stdout.
	ProtocolJSONRPC = "jsonrpc"
)

// Modes accepted in Tool.Mode.
const (
	// ModePerCall starts a fresh process for every call.
	ModePerCall = "per-call"
	// ModePersistent keeps one warm process serving calls (jsonrpc only).
	ModePersistent = "persistent"
)

// WASM module styles accepted in Wasm.Style.
const (
	// StyleCommand runs a WASI command module (_start) once per call.
	StyleCommand = "command"
	// StyleReactor calls Wasm.Function of an initialized reactor module.
	StyleReactor = "reactor"
)

// Tool is one tool folder's tool.yaml. Its JSON form (the Tool of a Spec)
// uses the same keys as the YAML and round-trips.
type Tool struct {
	// Name is the tool's own name (the gateway namespaces it); it must match
	// ^[a-zA-Z0-9_-]{1,64}$.
	Name string `json:"name"`
	// Title is a human-readable name.
	Title string `json:"title,omitempty"`
	// Description tells a model what the tool does.
	Description string `json:"description"`
	// Version is free text, e.g. "1.2.0".
	Version string `json:"version,omitempty"`
	// InputSchema is a JSON Schema object; nil means {"type":"object"}.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema is a JSON Schema object for structuredContent, or nil.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`

	// Runtime is one of python, node, bash, ruby, exec, wasm.
	Runtime string `json:"runtime"`
	// Entry is the script or module, relative to the tool folder.
	Entry string `json:"entry"`
	// Args are extra arguments after the entry. An element that is exactly
	// "{name}" is replaced by the call's argument "name" (a string as it is,
	// anything else as JSON) and dropped when the argument is absent; every
	// other element is passed literally.
	Args []string `json:"args,omitempty"`
	// Protocol is simple (the default) or jsonrpc.
	Protocol string `json:"protocol,omitempty"`
	// Mode is per-call (the default) or persistent.
	Mode string `json:"mode,omitempty"`
	// Timeout bounds one call; zero means the executor's default.
	Timeout Duration `json:"timeout,omitzero"`
	// StallTimeout kills a call whose process printed nothing for this long;
	// zero means the executor's default.
	StallTimeout Duration `json:"stall_timeout,omitzero"`

	// Env names variables of the gateway's environment passed to the tool.
	Env []string `json:"env,omitempty"`
	// Secrets names SKILLGATE_* variables of the gateway's environment
	// passed to the tool.
	Secrets []string `json:"secrets,omitempty"`

	// Annotations are MCP ToolAnnotations.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Sandbox runs the tool under bubblewrap.
	Sandbox Sandbox `json:"sandbox,omitzero"`
	// Ulimits are resource limits (setrlimit) for the tool's processes.
	Ulimits Ulimits `json:"ulimits,omitzero"`
	// Dependencies are packages installed once into the tool's own
	// environment.
	Dependencies Dependencies `json:"dependencies,omitzero"`
	// Requires names services (see services/) the tool needs; carried for
	// the gateway.
	Requires []string `json:"requires,omitempty"`
	// Wasm configures a wasm tool.
	Wasm *Wasm `json:"wasm,omitempty"`
}

// Annotations are MCP ToolAnnotations, spelled as MCP spells them. A nil
// hint is left out of the definition.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Sandbox configures bubblewrap for a script tool.
type Sandbox struct {
	// Enabled runs the tool under bubblewrap: no network, read-only system,
	// private /tmp, the tool folder read-only, a new session and PID
	// namespace.
	Enabled bool `json:"enabled,omitempty"`
	// Network keeps the host's network inside the sandbox.
	Network bool `json:"network,omitempty"`
	// Mounts are extra read-only bind mounts.
	Mounts []Mount `json:"mounts,omitempty"`
}

// Mount is a read-only bind mount into a sandbox or a wasm guest.
type Mount struct {
	// Path is an absolute host path, or a path relative to the tool folder
	// (which must stay inside it).
	Path string `json:"path"`
	// At is where it appears inside; empty means the same absolute path for
	// scripts, and "/" + Path (relative) or Path (absolute) for wasm.
	At string `json:"at,omitempty"`
}

// Ulimits are setrlimit limits for a script tool's processes; zero leaves
// a limit as the executor has it.
type Ulimits struct {
	// Memory is the address-space limit (RLIMIT_AS) per process.
	Memory ByteSize `json:"memory,omitzero"`
	// Processes is RLIMIT_NPROC. The kernel does not apply it to root, so
	// the executor also relies on the sandbox's PID namespace there.
	Processes int `json:"processes,omitempty"`
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles int `json:"open_files,omitempty"`
	// CPU is the CPU time limit (RLIMIT_CPU, whole seconds).
	CPU Duration `json:"cpu,omitzero"`
	// FileSize is the largest file a process may write (RLIMIT_FSIZE).
	FileSize ByteSize `json:"file_size,omitzero"`
}

// Dependencies are packages a script tool needs.
type Dependencies struct {
	// Pip lists pip requirements (python only), installed into a venv.
	Pip []string `json:"pip,omitempty"`
	// Npm lists npm packages (node only), installed into node_modules.
	Npm []string `json:"npm,omitempty"`
}

// Wasm configures a wasm tool.
type Wasm struct {
	// Style is command (the default) or reactor.
	Style string `json:"style,omitempty"`
	// Function is the export a reactor module's calls go to.
	Function string `json:"function,omitempty"`
	// MemoryLimit caps the module's linear memory.
	MemoryLimit ByteSize `json:"memory_limit,omitzero"`
	// Mounts are read-only directories the guest may see.
	Mounts []Mount `json:"mounts,omitempty"`
	// Env is the guest's environment (literal values).
	Env map[string]string `json:"env,omitempty"`
}

// ProtocolOrDefault returns Protocol, or ProtocolSimple when it is empty.
func (t *Tool) ProtocolOrDefault() string {
	if t.Protocol == "" {
		return ProtocolSimple
	}
	return t.Protocol
}

// ModeOrDefault returns Mode, or ModePerCall when it is empty.
func (t *Tool) ModeOrDefault() string {
	if t.Mode == "" {
		return ModePerCall
	}
	return t.Mode
}

// Duration is a time.Duration written as a Go duration string ("1m30s").
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string like \"30s\", got %s", b)
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

func parseDuration(s string) (Duration, error) {
	if s == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write it like \"30s\", \"2m\" or \"1m30s\"", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return Duration(v), nil
}

// ByteSize is a number of bytes, written as a number or with a unit
// ("64MiB", "512KB", "1G"). Units are binary: K, KB and KiB all mean 1024.
type ByteSize int64

// MarshalJSON implements json.Marshaler (a plain number of bytes).
func (b ByteSize) MarshalJSON() ([]byte, error) { return []byte(strconv.FormatInt(int64(b), 10)), nil }

// UnmarshalJSON implements json.Unmarshaler: a number or a string with a unit.
func (b *ByteSize) UnmarshalJSON(data []byte) error {
	var n int64
	if err := json.Unmarshal(data, &n); err == nil {
		if n < 0 {
			return fmt.Errorf("%d is negative", n)
		}
		*b = ByteSize(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("want a size like 65536 or \"64MiB\", got %s", data)
	}
	v, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

func parseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size; write a number of bytes or use a unit, like \"64MiB\"", s)
	}
	return ByteSize(n * mult), nil
}
