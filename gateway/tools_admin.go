package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/gateway/toolstore"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// toolGroup is the admin group of the tool management tools, activated as
// @tool: tool__register, tool__build_wasm, tool__update, tool__delete,
// tool__versions, tool__rollback and tool__list. They write into the first
// tools dir through toolstore; the watcher then serves the result as
// tools__<name>, before the call returns.
const toolGroup = "tool"

func init() {
	adminGroups[toolGroup] = "Register, update, delete, version and roll back script and WASM tools (WASM built from Go source), saved as folders in the first tools dir"
	adminExecutors[toolGroup] = func(g *Gateway) sdk.Executor { return toolAdmin{g} }
}

const toolSchemaHint = `tool.yaml keys as JSON (see docs/SCRIPTS.md): description, runtime (python|node|bash|ruby|exec|wasm), entry, input_schema, output_schema, protocol (simple|jsonrpc), mode (per-call|persistent), timeout, annotations, sandbox, wasm {style, function, memory_limit}, ...; name may be left out`

var toolAdminTools = []json.RawMessage{
	toolDef("register", "Register a script tool",
		"Write a new script tool (Python, Node, Bash, Ruby or an executable) as a folder in the first tools dir: its tool.yaml from `tool` and its files from `files`. Everything is validated before anything is written; problems come back with the field. It is served as tools__<name> when this returns.",
		`{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"tool":{"type":"object","description":`+jsonString(toolSchemaHint)+`},"files":{"type":"object","additionalProperties":{"type":"string"},"description":"file path (relative to the tool folder) -> content, e.g. {\"main.py\": \"...\"}"}},"required":["name","tool","files"]}`,
		false, false),
	toolDef("build_wasm", "Build a WASM tool",
		"Compile Go source (language go, the default; GOOS=wasip1 with the local toolchain) or Rust (language rust, needs the wasm32-wasip1 target) to a WebAssembly tool and register it, or update it when it exists. `files` holds the sources (main.go, optionally go.mod); tool.runtime defaults to wasm and tool.entry to <name>.wasm. A reactor (tool.wasm.style reactor) exports its function with //go:wasmexport. The sources stay in the folder, so an update of them rebuilds.",
		`{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"tool":{"type":"object","description":`+jsonString(toolSchemaHint)+`},"files":{"type":"object","additionalProperties":{"type":"string"}},"language":{"type":"string","enum":["go","rust"],"default":"go"}},"required":["name","tool","files"]}`,
		false, false),
	toolDef("update", "Update a tool",
		"Write a new version of a tool: the current folder with `tool` (replaces tool.yaml, when given), `files` (added or replaced) and `remove` (deleted) applied. The current version is kept for tool__rollback. A wasm tool whose sources change is rebuilt. Validated before anything changes.",
		`{"type":"object","properties":{"name":{"type":"string"},"tool":{"type":"object","description":`+jsonString(toolSchemaHint)+`},"files":{"type":"object","additionalProperties":{"type":"string"}},"remove":{"type":"array","items":{"type":"string"}},"build":{"type":"string","enum":["go","rust"],"description":"rebuild the wasm entry from source"}},"required":["name"]}`,
		true, false),
	toolDef("delete", "Delete a tool",
		"Remove a tool's folder; it keeps it as its newest version, so tool__rollback restores it.",
		`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		true, false),
	toolDef("versions", "Tool versions",
		"List a tool's versions, oldest first: number, time, description, and which one is live.",
		`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		false, true),
	toolDef("rollback", "Roll back a tool",
		"Make an earlier version live again (as a new version, so a rollback can be undone); version defaults to the one before the live one. Restores a deleted tool too.",
		`{"type":"object","properties":{"name":{"type":"string"},"version":{"type":"integer","minimum":1}},"required":["name"]}`,
		true, false),
	toolDef("list", "List tool folders",
		"Every tool folder of the tools dirs: its source, exposed tool name, state and, for an invalid one, its problems with file:line.",
		`{"type":"object","properties":{}}`,
		false, true),
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func toolDef(name, title, desc, schema string, destructive, readOnly bool) json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"name": name, "title": title, "description": desc, "inputSchema": json.RawMessage(schema),
		"annotations": map[string]bool{"readOnlyHint": readOnly, "destructiveHint": destructive, "openWorldHint": false},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// toolAdmin serves the tool group's tools in process.
type toolAdmin struct{ g *Gateway }

var _ sdk.Executor = toolAdmin{}

func (a toolAdmin) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "gateway", Version: a.g.opts.Version, Kinds: []string{"admin"}}, nil
}

func (a toolAdmin) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Source != adminSourceID(toolGroup) {
		return sdk.Definitions{}, fmt.Errorf("%w: %s", sdk.ErrUnknownSource, req.Source)
	}
	return sdk.Definitions{Tools: toolAdminTools}, nil
}

func (a toolAdmin) Unload(context.Context, string) error { return nil }

type toolAdminArgs struct {
	Name     string            `json:"name"`
	Tool     json.RawMessage   `json:"tool"`
	Files    map[string]string `json:"files"`
	Remove   []string          `json:"remove"`
	Build    string            `json:"build"`
	Language string            `json:"language"`
	Version  int               `json:"version"`
}

func (a toolAdmin) Call(ctx context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	if req.Method != "tools/call" {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by the gateway's tool management"}
	}
	var p struct {
		Name      string        `json:"name"`
		Arguments toolAdminArgs `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return toolAdminError(fmt.Sprintf("arguments: %v", err)), nil
	}
	if p.Name == "list" {
		return a.list(), nil
	}
	args := p.Arguments
	st, err := a.g.tools.store()
	if err != nil {
		return toolAdminError(err.Error()), nil
	}
	var v toolstore.Version
	var verb string
	switch p.Name {
	case "register":
		verb = "registered"
		v, err = st.Register(ctx, args.Name, toolstore.Change{Tool: args.Tool, Files: args.Files})
	case "build_wasm":
		v, verb, err = a.buildWasm(ctx, st, args)
	case "update":
		verb = "updated"
		v, err = st.Update(ctx, args.Name, toolstore.Change{Tool: args.Tool, Files: args.Files, Remove: args.Remove, Build: args.Build})
	case "delete":
		verb = "deleted"
		v, err = st.Delete(args.Name)
	case "rollback":
		verb = "rolled back"
		v, err = st.Rollback(ctx, args.Name, args.Version)
	case "versions":
		vs, err := st.Versions(args.Name)
		if err != nil {
			return toolAdminError(err.Error()), nil
		}
		var b strings.Builder
		for _, v := range vs {
			fmt.Fprintf(&b, "%d  %s  %s", v.N, v.Time.Format("2006-01-02 15:04:05"), v.Description)
			if v.Live {
				b.WriteString("  (live)")
			}
			b.WriteByte('\n')
		}
		return toolAdminResult(b.String(), map[string]any{"name": args.Name, "versions": vs}), nil
	default:
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown tool management tool " + p.Name}
	}
	if err != nil {
		return toolAdminError(fmt.Sprintf("%s: %v", p.Name, err)), nil
	}
	a.g.tools.scan(ctx)
	return a.changed(args.Name, verb, v), nil
}

// buildWasm registers or updates a wasm tool built from source.
func (a toolAdmin) buildWasm(ctx context.Context, st *toolstore.Store, args toolAdminArgs) (toolstore.Version, string, error) {
	if err := toolstore.CheckName(args.Name); err != nil {
		return toolstore.Version{}, "", err
	}
	lang := args.Language
	if lang == "" {
		lang = "go"
	}
	var fields map[string]any
	if len(args.Tool) > 0 {
		if err := json.Unmarshal(args.Tool, &fields); err != nil || fields == nil {
			return toolstore.Version{}, "", fmt.Errorf("tool must be a JSON object of tool.yaml keys")
		}
	} else {
		fields = map[string]any{}
	}
	if _, ok := fields["runtime"]; !ok {
		fields["runtime"] = toolspec.RuntimeWasm
	}
	if _, ok := fields["entry"]; !ok {
		fields["entry"] = args.Name + ".wasm"
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return toolstore.Version{}, "", err
	}
	c := toolstore.Change{Tool: raw, Files: args.Files, Build: lang}
	if _, err := st.Versions(args.Name); err == nil {
		if v, err := st.Update(ctx, args.Name, c); !errors.Is(err, toolstore.ErrNotFound) {
			return v, "rebuilt", err
		}
	}
	v, err := st.Register(ctx, args.Name, c)
	return v, "built", err
}

// changed reports a write and what the gateway made of it.
func (a toolAdmin) changed(name, verb string, v toolstore.Version) json.RawMessage {
	exposed := ToolsNamespace + a.g.cfgSeparator() + name
	text := fmt.Sprintf("%s %s: version %d", verb, name, v.N)
	out := map[string]any{"name": name, "version": v}
	if !v.Live {
		return toolAdminResult(text+" kept; tool__rollback restores it\n", out)
	}
	out["tool"] = exposed
	var st SourceStatus
	a.g.mu.Lock()
	if s := a.g.sources[toolSourceID(name)]; s != nil {
		st = s.status()
	}
	a.g.mu.Unlock()
	out["state"] = st.State
	switch st.State {
	case "ready":
		text += fmt.Sprintf(", served as %s\n", exposed)
	case "":
		text += ", not served yet\n"
	default:
		text += fmt.Sprintf(", but its state is %s: %s\n", st.State, st.LastError)
		out["error"] = st.LastError
	}
	return toolAdminResult(text, out)
}

// list describes every tool folder.
func (a toolAdmin) list() json.RawMessage {
	var rows []SourceStatus
	for _, s := range a.g.Status() {
		if strings.HasPrefix(s.Name, "tool:") {
			rows = append(rows, s)
		}
	}
	var b strings.Builder
	for _, s := range rows {
		fmt.Fprintf(&b, "%s (%s): %s", s.Name, s.Executor, s.State)
		if s.LastError != "" {
			b.WriteString(": " + s.LastError)
		}
		b.WriteByte('\n')
	}
	if len(rows) == 0 {
		b.WriteString("no tool folders (see tools.dirs)\n")
	}
	return toolAdminResult(b.String(), map[string]any{"folders": rows, "dirs": a.g.tools.dirList()})
}

func (g *Gateway) cfgSeparator() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cfg.Names.Separator != "" {
		return g.cfg.Names.Separator
	}
	return "__"
}

// store returns the store of the first tools dir, which it creates.
func (t *toolFolders) store() (*toolstore.Store, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.dirs) == 0 {
		return nil, errors.New("no tools dir is configured; add tools: {dirs: [./tools]} to the config")
	}
	dir := t.dirs[0]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tools dir %s: %w", dir, err)
	}
	st := t.stores[dir]
	if st == nil {
		st = toolstore.New(dir)
		t.stores[dir] = st
	}
	return st, nil
}

func (t *toolFolders) dirList() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.dirs)
}

func toolAdminResult(text string, structured any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text}},
		"structuredContent": structured,
	})
	return b
}

func toolAdminError(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": msg}},
		"isError": true,
	})
	return b
}
