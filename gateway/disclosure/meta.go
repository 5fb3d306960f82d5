package disclosure

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// The meta-tools' names. They are reserved: no source can take them.
const (
	FindTools     = "find_tools"
	DescribeTools = "describe_tools"
	CallTool      = "call_tool"
	Activate      = "activate"
	Deactivate    = "deactivate"
)

// Names lists the meta-tools in the order tools/list shows them.
var Names = []string{FindTools, DescribeTools, CallTool, Activate, Deactivate}

var metaDefs = map[string]string{
	FindTools:     `{"name":"find_tools","title":"Find tools","description":"Search every tool this gateway can run, including tools not listed yet. Returns one line per tool (name and what it does), best match first. Then describe_tools shows a tool's parameters and call_tool runs it.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What you want to do, in a few words; empty lists everything"},"server":{"type":"string","description":"Only tools of this server"},"skill":{"type":"string","description":"Only tools of this skill"},"tag":{"type":"string","description":"Only tools with this tag"},"limit":{"type":"integer","minimum":1,"maximum":50,"description":"Results per page (default 10)"},"cursor":{"type":"string","description":"next_cursor of the previous page"}}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
	DescribeTools: `{"name":"describe_tools","title":"Describe tools","description":"Full definitions (input and output schema, annotations) of tools named by find_tools.","inputSchema":{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":20,"description":"Tool names"}},"required":["names"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
	CallTool:      `{"name":"call_tool","title":"Call a tool","description":"Run any tool by name, listed or not, with its arguments; the result is the tool's own.","inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"Tool name, as find_tools shows it"},"arguments":{"type":"object","description":"The tool's arguments"}},"required":["name"]},"annotations":{"openWorldHint":true}}`,
	Activate:      `{"name":"activate","title":"Activate tools","description":"Make tools appear in your tool list: a server's, a skill's, single tools (names or globs such as github__*), or a bundle written @name. Answers with what became visible.","inputSchema":{"type":"object","properties":{"targets":{"type":"array","items":{"type":"string"},"minItems":1,"description":"Server, skill or tool names, globs, or @bundles"}},"required":["targets"]},"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`,
	Deactivate:    `{"name":"deactivate","title":"Deactivate tools","description":"Remove what activate added from your tool list.","inputSchema":{"type":"object","properties":{"targets":{"type":"array","items":{"type":"string"},"minItems":1,"description":"Targets given to activate"}},"required":["targets"]},"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`,
}

var (
	metaJSON   [][]byte
	metaByName = map[string][]byte{}
)

func init() {
	for _, n := range Names {
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(metaDefs[n])); err != nil {
			panic("disclosure: meta-tool " + n + ": " + err.Error())
		}
		metaJSON = append(metaJSON, c.Bytes())
		metaByName[n] = c.Bytes()
	}
}

// MetaTool returns the definition of a meta-tool.
func MetaTool(name string) (json.RawMessage, bool) {
	b, ok := metaByName[name]
	return b, ok
}

// Invoker calls a catalog tool with arguments on behalf of call's client,
// the way a direct tools/call would, and returns its CallToolResult.
type Invoker func(ctx context.Context, it *catalog.Item, args json.RawMessage, call sdk.Call) (json.RawMessage, error)

// CallMeta runs the meta-tool name for req with the raw arguments object
// and returns its CallToolResult. Mistakes in the arguments (unknown
// names, bad values) are tool errors (isError) that say what to do; the
// error return is for call_tool's own failures.
func (d *Disclosure) CallMeta(ctx context.Context, snap *catalog.Snapshot, req Request, name string, args json.RawMessage, invoke Invoker, call sdk.Call) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	switch name {
	case FindTools:
		return d.find(snap, req, args), nil
	case DescribeTools:
		return d.describe(snap, req, args), nil
	case CallTool:
		return d.callTool(ctx, snap, req, args, invoke, call)
	case Activate:
		return d.activate(snap, req, args, call, true), nil
	case Deactivate:
		return d.activate(snap, req, args, call, false), nil
	}
	return toolError("unknown meta-tool %q", name), nil
}

// Card is one find_tools result.
type Card struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Server      string `json:"server,omitempty"`
	Group       string `json:"group,omitempty"`
	// Listed is whether the tool is in the caller's tools/list.
	Listed bool `json:"listed"`
}

// FindResult is find_tools' structured result.
type FindResult struct {
	Tools      []Card `json:"tools"`
	Total      int    `json:"total"`
	NextCursor string `json:"next_cursor,omitempty"`
}

type findArgs struct {
	Query  string `json:"query"`
	Server string `json:"server"`
	Skill  string `json:"skill"`
	Tag    string `json:"tag"`
	Limit  *int   `json:"limit"`
	Cursor string `json:"cursor"`
}

// Find runs a find_tools query for req; the CLI and benchmarks use it
// directly.
func (d *Disclosure) Find(snap *catalog.Snapshot, req Request, query, server string, limit int) FindResult {
	res, _ := d.runFind(snap, req, findArgs{Query: query, Server: server, Limit: &limit})
	return res
}

func (d *Disclosure) find(snap *catalog.Snapshot, req Request, raw json.RawMessage) json.RawMessage {
	var a findArgs
	if err := strictArgs(raw, &a); err != nil {
		return toolError("find_tools: %v", err)
	}
	res, err := d.runFind(snap, req, a)
	if err != nil {
		return toolError("find_tools: %v", err)
	}
	var text strings.Builder
	if len(res.Tools) == 0 && a.Server != "" {
		if why := d.noServer(snap, req, a.Server); why != "" {
			return toolError("find_tools: %s", why)
		}
	}
	if len(res.Tools) == 0 {
		text.WriteString("No tool matches")
		if a.Query != "" {
			fmt.Fprintf(&text, " %q", a.Query)
		}
		text.WriteString(". Try fewer or other words, or drop the filters.")
	}
	unlisted := false
	for _, c := range res.Tools {
		fmt.Fprintf(&text, "%s: %s", c.Name, c.Description)
		switch {
		case c.Listed:
			text.WriteString(" [listed]")
		case c.Group != "":
			fmt.Fprintf(&text, " [in @%s]", c.Group)
			unlisted = true
		default:
			unlisted = true
		}
		text.WriteByte('\n')
	}
	if unlisted {
		text.WriteString("Tools not marked [listed] run through call_tool(name, arguments), or join your list with activate.\n")
	}
	if res.NextCursor != "" {
		fmt.Fprintf(&text, "(%d of %d; pass cursor %q for more)\n", len(res.Tools), res.Total, res.NextCursor)
	}
	return structuredResult(strings.TrimRight(text.String(), "\n"), res)
}

func (d *Disclosure) runFind(snap *catalog.Snapshot, req Request, a findArgs) (FindResult, error) {
	limit := 10
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > 50 {
			return FindResult{}, fmt.Errorf("limit %d is out of range; use 1 to 50", *a.Limit)
		}
		limit = *a.Limit
	}
	offset := 0
	if a.Cursor != "" {
		var ok bool
		if offset, ok = decodeCursor(a.Cursor, a); !ok {
			return FindResult{}, fmt.Errorf("cursor %q does not belong to this query; repeat the query without it", a.Cursor)
		}
	}
	v := d.view(req.Profile)
	ix := d.index(snap)
	keep := func(dc *doc) bool {
		it := dc.item
		if !v.serves(it) {
			return false
		}
		if a.Server != "" && it.Source != a.Server && !matchAny([]string{a.Server}, it.Source) && it.Group != a.Server {
			return false
		}
		if it.Group != "" && d.idle[it.Group] && a.Server != it.Group && strings.TrimSpace(a.Query) != "" {
			return false // nothing to act on: not offered for a task (an empty query lists everything)
		}
		if a.Skill != "" && it.Skill != a.Skill {
			return false
		}
		return a.Tag == "" || slices.ContainsFunc(dc.tags, func(t string) bool { return strings.EqualFold(t, a.Tag) })
	}
	hits, total := ix.search(a.Query, keep, offset+limit)
	res := FindResult{Total: total, Tools: []Card{}}
	st := d.session(req, false)
	if st != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
	}
	for i := offset; i < len(hits) && i < offset+limit; i++ {
		dc := &ix.docs[hits[i].doc]
		c := Card{Name: dc.item.Name, Description: dc.card, Server: dc.server, Group: dc.item.Group}
		if st != nil {
			c.Listed = st.listed(dc.item)
		} else {
			c.Listed = v.listedBase(dc.item)
		}
		res.Tools = append(res.Tools, c)
	}
	if offset+limit < total {
		res.NextCursor = encodeCursor(offset+limit, a)
	}
	return res, nil
}

// A cursor is the next offset and a check of the query it belongs to.
func encodeCursor(offset int, a findArgs) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset) + "|" + queryKey(a)))
}

func decodeCursor(c string, a findArgs) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	off, key, ok := strings.Cut(string(b), "|")
	n, err := strconv.Atoi(off)
	return n, ok && err == nil && n >= 0 && key == queryKey(a)
}

func queryKey(a findArgs) string {
	h := uint32(2166136261)
	for _, s := range []string{a.Query, a.Server, a.Skill, a.Tag} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint32(s[i])) * 16777619
		}
		h = (h ^ 0xff) * 16777619
	}
	return strconv.FormatUint(uint64(h), 36)
}

func (d *Disclosure) describe(snap *catalog.Snapshot, req Request, raw json.RawMessage) json.RawMessage {
	var a struct {
		Names []string `json:"names"`
	}
	if err := strictArgs(raw, &a); err != nil {
		return toolError("describe_tools: %v", err)
	}
	if len(a.Names) == 0 || len(a.Names) > 20 {
		return toolError("describe_tools: names must list 1 to 20 tool names (find_tools finds them)")
	}
	v := d.view(req.Profile)
	var defs [][]byte
	var missing []string
	for _, n := range a.Names {
		if m, ok := metaByName[n]; ok {
			defs = append(defs, m)
			continue
		}
		it, ok := snap.Tool(n)
		if !ok || !v.serves(it) {
			missing = append(missing, n)
			continue
		}
		defs = append(defs, it.Raw)
	}
	if len(missing) > 0 {
		return toolError("describe_tools: unknown tool %s; find_tools shows the tools available here", strings.Join(quoteAll(missing), ", "))
	}
	list := encodeRaw(defs)
	return textResult(string(list))
}

func (d *Disclosure) callTool(ctx context.Context, snap *catalog.Snapshot, req Request, raw json.RawMessage, invoke Invoker, call sdk.Call) (json.RawMessage, error) {
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := strictArgs(raw, &a); err != nil {
		return toolError("call_tool: %v", err), nil
	}
	if a.Name == "" {
		return toolError("call_tool: name is required: the tool to run, as find_tools shows it"), nil
	}
	if IsMeta(a.Name) {
		return toolError("call_tool: %s is a meta-tool; call it directly", a.Name), nil
	}
	if t := bytes.TrimSpace(a.Arguments); len(t) > 0 && t[0] != '{' && string(t) != "null" {
		return toolError("call_tool: arguments must be an object of the tool's parameters (describe_tools shows them)"), nil
	}
	if string(bytes.TrimSpace(a.Arguments)) == "null" {
		a.Arguments = nil
	}
	if why := d.ToolRefusal(snap, req, a.Name); why != "" {
		return toolError("call_tool: %s", why), nil
	}
	it, _ := snap.Tool(a.Name)
	return invoke(ctx, it, a.Arguments, call)
}

// ActivateResult is activate's and deactivate's structured result.
type ActivateResult struct {
	// Targets are the resolved targets (server:x, skill:x, tool names, globs, @group).
	Targets []string `json:"targets"`
	// Listed are the tools that entered (activate) or left (deactivate)
	// the session's tools/list.
	Listed []string `json:"listed"`
	// Unchanged are targets that were already in the state asked for.
	Unchanged []string `json:"unchanged,omitempty"`
	// Missing are requirements of activated skills that could not be
	// activated here, with the reason.
	Missing []string `json:"missing,omitempty"`
	// Available are the targets' tools when the client has no session to
	// remember the activation (Listed is then empty: its list stays as it
	// is): it calls them through call_tool.
	Available []string `json:"available,omitempty"`
	// Tools are the definitions of the Available tools.
	Tools []json.RawMessage `json:"tools,omitempty"`
	// NotReady says, for each activated server that is not ready, its state
	// and last error: its tools come once it is.
	NotReady []string `json:"not_ready,omitempty"`
}

// stateless activation returns at most this many definitions.
const maxStatelessDefs = 50

func (d *Disclosure) activate(snap *catalog.Snapshot, req Request, raw json.RawMessage, call sdk.Call, on bool) json.RawMessage {
	verb := Activate
	if !on {
		verb = Deactivate
	}
	var a struct {
		Targets []string `json:"targets"`
	}
	if err := strictArgs(raw, &a); err != nil {
		return toolError("%s: %v", verb, err)
	}
	if len(a.Targets) == 0 {
		return toolError("%s: targets is required: server, skill or tool names, globs, or @bundles", verb)
	}
	v := d.view(req.Profile)
	targets, bundles, errs, missing := d.resolve(snap, v, a.Targets)
	if len(errs) > 0 {
		return toolError("%s: nothing changed: %s", verb, strings.Join(errs, "; "))
	}
	res := ActivateResult{Targets: targetNames(targets), Listed: []string{}, Missing: missing}
	missingNote := ""
	if len(missing) > 0 {
		missingNote = " Not available here: " + strings.Join(missing, "; ") + "."
	}

	st := d.session(req, on)
	if st == nil {
		if !on {
			return toolError("deactivate: this connection has no session, so nothing was activated for it (2026-07-28 clients keep a stable list; nothing to undo)")
		}
		// No session to remember it: hand the definitions over instead.
		total := 0
		for _, it := range snap.Tools() {
			if v.serves(it) && covers(targets, it) {
				total++
				if len(res.Tools) < maxStatelessDefs {
					res.Tools = append(res.Tools, it.Raw)
					res.Available = append(res.Available, it.Name)
				}
			}
		}
		res.NotReady = d.notReady(targets)
		return structuredResult(statelessText(a.Targets, res, total)+notReadyNote(res.NotReady)+missingNote, res)
	}

	st.mu.Lock()
	before := st.listedNames(snap)
	var changed []target
	var problems []string
	for _, t := range targets {
		switch {
		case on && st.active[t]:
			res.Unchanged = append(res.Unchanged, t.String())
		case on:
			changed = append(changed, t)
		case st.active[t]:
			changed = append(changed, t)
		case t.kind == "tool" && v.mode == ModeProgressive && matchAny(v.pinned, t.name):
			problems = append(problems, fmt.Sprintf("%s is pinned by the configuration and stays listed", t.name))
		case t.kind == "tool" && v.mode == ModeAll && !st.shows(itemOrNil(snap, t.name)) && v.listedBase(itemOrNil(snap, t.name)):
			problems = append(problems, fmt.Sprintf("%s is listed because this endpoint lists every tool (disclosure: all); it cannot be deactivated", t.name))
		case t.kind == "tool" && st.shows(itemOrNil(snap, t.name)):
			problems = append(problems, fmt.Sprintf("%s is listed because %s is active; deactivate that instead", t.name, st.why(itemOrNil(snap, t.name))))
		default:
			problems = append(problems, fmt.Sprintf("%s is not active", t))
		}
	}
	if len(problems) > 0 {
		st.mu.Unlock()
		return toolError("%s: nothing changed: %s", verb, strings.Join(problems, "; "))
	}
	if len(changed) == 0 {
		st.mu.Unlock()
		return toolError("%s: nothing changed: %s already active", verb, strings.Join(res.Unchanged, ", "))
	}
	for _, t := range changed {
		if on {
			st.active[t] = true
		} else {
			delete(st.active, t)
		}
	}
	for b, ts := range bundles {
		if on {
			st.bundles[b] = ts
		} else {
			delete(st.bundles, b)
		}
	}
	st.gen++
	after := st.listedNames(snap)
	st.mu.Unlock()

	from, to := before, after
	if !on {
		from, to = after, before
	}
	for _, it := range snap.Tools() {
		if to[it.Name] && !from[it.Name] {
			res.Listed = append(res.Listed, it.Name)
		}
	}
	if len(res.Listed) > 0 && call != nil {
		_ = call.Notify(sdk.Notification{Method: "notifications/tools/list_changed"})
	}
	var text string
	if on {
		res.NotReady = d.notReady(changed)
	}
	switch {
	case on && len(res.Listed) == 0 && len(res.NotReady) > 0:
		text = fmt.Sprintf("Activated %s, but no tool entered your list.", strings.Join(targetNames(changed), ", "))
	case on && len(res.Listed) == 0:
		text = fmt.Sprintf("Activated %s; no tool entered your list (they were listed already, or have not loaded yet).", strings.Join(targetNames(changed), ", "))
	case on:
		text = fmt.Sprintf("Activated %s. Now listed: %s.", strings.Join(targetNames(changed), ", "), strings.Join(res.Listed, ", "))
	case len(res.Listed) == 0:
		text = fmt.Sprintf("Deactivated %s; your list is unchanged.", strings.Join(targetNames(changed), ", "))
	default:
		text = fmt.Sprintf("Deactivated %s. No longer listed: %s.", strings.Join(targetNames(changed), ", "), strings.Join(res.Listed, ", "))
	}
	if len(res.Unchanged) > 0 {
		text += " Already active: " + strings.Join(res.Unchanged, ", ") + "."
	}
	return structuredResult(text+notReadyNote(res.NotReady)+missingNote, res)
}

// why names the active target that shows it. st.mu is held.
func (st *state) why(it *catalog.Item) string {
	for _, t := range []target{{"group", it.Group}, {"server", it.Source}, {"skill", it.Skill}} {
		if t.name != "" && st.active[t] {
			return t.String()
		}
	}
	for t := range st.active {
		if t.kind == "glob" && matchAny([]string{t.name}, it.Name) {
			return t.String()
		}
	}
	return "another target"
}

func itemOrNil(snap *catalog.Snapshot, name string) *catalog.Item {
	if it, ok := snap.Tool(name); ok {
		return it
	}
	return &catalog.Item{Name: name}
}

// covers reports whether a target names it.
func covers(targets []target, it *catalog.Item) bool {
	for _, t := range targets {
		switch t.kind {
		case "tool":
			if t.name == it.Name {
				return true
			}
		case "glob":
			if matchAny([]string{t.name}, it.Name) {
				return true
			}
		case "group":
			if it.Group == t.name {
				return true
			}
		case "server":
			if it.Source == t.name && it.Group == "" {
				return true
			}
		case "skill":
			if it.Skill == t.name {
				return true
			}
		}
	}
	return false
}

func targetNames(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

// strictArgs decodes a meta-tool's arguments, refusing unknown members so
// a misspelt argument is reported rather than ignored.
func strictArgs(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func encodeRaw(items [][]byte) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// toolError is a CallToolResult with isError set and a text message.
func toolError(format string, args ...any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": fmt.Sprintf(format, args...)}},
		"isError": true,
	})
	return b
}

func textResult(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	return b
}

func structuredResult(text string, v any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text}},
		"structuredContent": v,
	})
	return b
}
