package toolspec

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/names"
	suggestpkg "github.com/skillgate/skillgate/internal/suggest"
)

var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// Runtimes lists every runtime a tool.yaml may name.
var Runtimes = []string{RuntimePython, RuntimeNode, RuntimeBash, RuntimeRuby, RuntimeExec, RuntimeWasm}

// Validate checks a Tool that did not come from Parse (a Spec's, decoded
// from JSON). It returns an *Error listing every problem, or nil.
func (t *Tool) Validate() error {
	var p problems
	t.validate(&p)
	return p.err()
}

// checkServices reports the services t requires that services lacks.
func (t *Tool) checkServices(services []string, p *problems) {
	for i, r := range t.Requires {
		if !names.Valid(r) || slices.Contains(services, r) {
			continue // an invalid name is validate's problem
		}
		hint := "define it under services: in the gateway config, or remove it"
		if near, ok := suggestpkg.Closest(r, services); ok && 2*suggestpkg.Distance(r, near) <= max(len(r), len(near)) {
			hint = fmt.Sprintf("did you mean %q?", near)
		} else if len(services) > 0 {
			hint = "the services are " + strings.Join(services, ", ") + "; " + hint
		}
		p.at(fmt.Sprintf("requires[%d]", i), "unknown service %q; %s", r, hint)
	}
}

func (t *Tool) validate(p *problems) {
	switch {
	case t.Name == "":
		p.at("name", "missing; name the tool with letters, digits, _ and - (at most 64)")
	case !names.Valid(t.Name):
		p.at("name", "%q may hold only letters, digits, _ and - (1 to 64 of them), as LLM APIs require", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		p.at("description", "missing; say in a sentence what the tool does, the model reads it to pick tools")
	}
	t.validateSchema(p, "input_schema", t.InputSchema)
	t.validateSchema(p, "output_schema", t.OutputSchema)

	wasm := t.Runtime == RuntimeWasm
	switch {
	case t.Runtime == "":
		p.at("runtime", "missing; set one of %s", strings.Join(Runtimes, ", "))
	case !slices.Contains(Runtimes, t.Runtime):
		p.at("runtime", "%q is not one of %s", t.Runtime, strings.Join(Runtimes, ", "))
	}
	if t.Entry == "" {
		p.at("entry", "missing; name the script or module, relative to the tool folder (e.g. main.py)")
	} else if msg := relPathProblem(t.Entry); msg != "" {
		p.at("entry", "%s", msg)
	}
	for i, a := range t.Args {
		if strings.ContainsRune(a, 0) {
			p.at(fmt.Sprintf("args[%d]", i), "holds a NUL byte, which no argument can carry")
		}
	}
	switch t.Protocol {
	case "", ProtocolSimple, ProtocolJSONRPC:
	default:
		p.at("protocol", "%q is not simple or jsonrpc", t.Protocol)
	}
	switch t.Mode {
	case "", ModePerCall:
	case ModePersistent:
		if t.ProtocolOrDefault() != ProtocolJSONRPC && !wasm {
			p.at("mode", "persistent needs protocol: jsonrpc, so a warm process can tell one call's answer from the next")
		}
	default:
		p.at("mode", "%q is not per-call or persistent", t.Mode)
	}
	if wasm {
		if t.Protocol != "" {
			p.at("protocol", "applies to scripts; a wasm tool is configured under wasm: (style, function)")
		}
		if t.Mode != "" {
			p.at("mode", "applies to scripts; a wasm tool is configured under wasm: (style: reactor keeps warm instances)")
		}
		if t.Sandbox.Enabled || t.Sandbox.Network || len(t.Sandbox.Mounts) > 0 {
			p.at("sandbox", "a wasm module is always sandboxed; grant directories with wasm.mounts instead")
		}
		if t.Ulimits != (Ulimits{}) {
			p.at("ulimits", "apply to scripts; limit a wasm module's memory with wasm.memory_limit")
		}
		if len(t.Args) > 0 {
			p.at("args", "apply to scripts; a wasm module reads its arguments as JSON on stdin")
		}
	} else if t.Wasm != nil && t.Runtime != "" {
		p.at("wasm", "applies to runtime: wasm only; remove it or set runtime: wasm")
	}
	if len(t.Dependencies.Pip) > 0 && t.Runtime != RuntimePython {
		p.at("dependencies.pip", "pip packages need runtime: python")
	}
	if len(t.Dependencies.Npm) > 0 && t.Runtime != RuntimeNode {
		p.at("dependencies.npm", "npm packages need runtime: node")
	}
	for i, dep := range t.Dependencies.Pip {
		if strings.TrimSpace(dep) == "" || strings.HasPrefix(strings.TrimSpace(dep), "-") {
			p.at(fmt.Sprintf("dependencies.pip[%d]", i), "%q is not a requirement; write a package like \"requests==2.32.3\" or a path", dep)
		}
	}
	for i, dep := range t.Dependencies.Npm {
		if strings.TrimSpace(dep) == "" || strings.HasPrefix(strings.TrimSpace(dep), "-") {
			p.at(fmt.Sprintf("dependencies.npm[%d]", i), "%q is not a package; write one like \"slugify@1.6.6\"", dep)
		}
	}
	for i, name := range t.Env {
		if !envNameRE().MatchString(name) {
			p.at(fmt.Sprintf("env[%d]", i), "%q is not a variable name", name)
		}
	}
	for i, name := range t.Secrets {
		switch {
		case !envNameRE().MatchString(name):
			p.at(fmt.Sprintf("secrets[%d]", i), "%q is not a variable name", name)
		case !strings.HasPrefix(name, "SKILLGATE_"):
			p.at(fmt.Sprintf("secrets[%d]", i), "%q must start with SKILLGATE_: only SKILLGATE_* variables may be handed to tools as secrets (rename it, or list it under env)", name)
		}
	}
	for i, r := range t.Requires {
		if !names.Valid(r) {
			p.at(fmt.Sprintf("requires[%d]", i), "%q is not a service name", r)
		}
	}
	validateMounts(p, "sandbox.mounts", t.Sandbox.Mounts)
	if w := t.Wasm; w != nil {
		switch w.Style {
		case "", StyleCommand:
			if w.Function != "" {
				p.at("wasm.function", "applies to style: reactor; a command module runs _start")
			}
		case StyleReactor:
			if w.Function == "" {
				p.at("wasm.function", "missing; a reactor module needs the name of the export each call runs")
			}
		default:
			p.at("wasm.style", "%q is not command or reactor", w.Style)
		}
		if w.MemoryLimit != 0 && w.MemoryLimit < 64<<10 {
			p.at("wasm.memory_limit", "%d bytes is less than one 64 KiB page", w.MemoryLimit)
		}
		validateMounts(p, "wasm.mounts", w.Mounts)
		for k := range w.Env {
			if !envNameRE().MatchString(k) {
				p.at("wasm.env."+k, "%q is not a variable name", k)
			}
		}
	}
}

func validateMounts(p *problems, field string, mounts []Mount) {
	for i, m := range mounts {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case m.Path == "":
			p.at(f+".path", "missing; name a directory or file to mount read-only")
		case !filepath.IsAbs(m.Path):
			if msg := relPathProblem(m.Path); msg != "" {
				p.at(f+".path", "%s", msg)
			}
		}
		if m.At != "" && (!path.IsAbs(m.At) || strings.ContainsRune(m.At, 0)) {
			p.at(f+".at", "%q must be an absolute path", m.At)
		}
	}
}

// validateSchema checks that a schema is an object schema, as MCP requires
// of inputSchema and outputSchema.
func (t *Tool) validateSchema(p *problems, field string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		p.at(field, "want a JSON Schema object such as {type: object, properties: {...}}")
		return
	}
	if typ, ok := m["type"]; ok && typ != "object" {
		p.at(field, "type is %v; MCP wants an object schema here, so set type: object and describe each argument under properties", typ)
	}
	if props, ok := m["properties"]; ok {
		if _, isMap := props.(map[string]any); !isMap {
			p.at(field+".properties", "want a mapping of argument names to schemas")
		}
	}
}

// relPathProblem says what is wrong with a path that must stay inside the
// tool folder, or returns "".
func relPathProblem(rel string) string {
	switch {
	case strings.ContainsRune(rel, 0):
		return "holds a NUL byte"
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/"):
		return fmt.Sprintf("%q is absolute; name a file inside the tool folder, relative to it", rel)
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == ".." {
			return fmt.Sprintf("%q leaves the tool folder (..); keep every file the tool uses inside its folder", rel)
		}
	}
	if filepath.Clean(rel) == "." {
		return fmt.Sprintf("%q names the folder itself; name a file inside it", rel)
	}
	return ""
}

// checkFiles checks, on disk, that the entry and relative mounts resolve
// inside dir.
func (t *Tool) checkFiles(dir string, p *problems) {
	if t.Entry != "" && relPathProblem(t.Entry) == "" {
		full, err := Resolve(dir, t.Entry)
		if err != nil {
			p.at("entry", "%v", err)
		} else if t.Runtime == RuntimeExec {
			if fi, err := statFile(full); err == nil && fi.Mode().Perm()&0o111 == 0 {
				p.at("entry", "%q is not executable; runtime exec runs the entry itself (chmod +x it)", t.Entry)
			}
		}
	}
	check := func(field string, mounts []Mount) {
		for i, m := range mounts {
			if m.Path != "" && !filepath.IsAbs(m.Path) && relPathProblem(m.Path) == "" {
				if _, err := resolve(dir, m.Path, false); err != nil {
					p.at(fmt.Sprintf("%s[%d].path", field, i), "%v", err)
				}
			}
		}
	}
	check("sandbox.mounts", t.Sandbox.Mounts)
	if t.Wasm != nil {
		check("wasm.mounts", t.Wasm.Mounts)
	}
}
