package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/skills/shape"
)

// Names of the tools Server serves.
const (
	ToolFind         = "find_skills"
	ToolLoad         = "load_skill"
	ToolReadFile     = "read_skill_file"
	ToolRun          = "run_skill_script"
	ToolReadArtifact = "read_artifact"
)

// ExtensionID is the MCP skills extension (SEP-2640, final 2026-09-13,
// written against base revision 2026-07-28) that Server's skills/list and
// skills/get follow.
const ExtensionID = "io.modelcontextprotocol/skills"

// Server serves a Library to MCP clients as an in-process sdk.Executor
// with one source: the tools find_skills, load_skill, read_skill_file,
// run_skill_script (and read_artifact when the library keeps artifacts),
// one prompt per skill (prompts/get returns the body), the resources
// skill://<skill>/SKILL.md with the template skill://{+path} for every
// file, and the skills extension's skills/list and skills/get.
type Server struct {
	lib      *Library
	visible  func(ctx context.Context, skillID string) bool // nil: every skill
	scopeKey func(ctx context.Context) string

	pagesMu sync.Mutex
	pages   map[pageKey]listPage // skills/list answers

	subMu  sync.Mutex
	subs   map[string]fileStamp // subscribed URIs, with their file's last stamp
	notify func(uri string)     // OnResourceUpdated

	digestMu   sync.Mutex
	digests    map[string]digested // by file path (Entry)
	warnedSnap *Snapshot           // the snapshot warned holds the warnings of
	warned     map[string]string   // skill ID -> why it is not listed, logged
}

// pageKey identifies a skills/list page: its first index and, for a
// scoped server, the request's scope.
type pageKey struct {
	start int
	scope string
}

// listPage is a skills/list answer kept for ListCacheAge.
type listPage struct {
	snap *Snapshot
	at   time.Time
	body json.RawMessage
}

// ListCacheAge is how long a skills/list page is served again from memory
// while the snapshot stays the same. Building one reads and hashes every
// file of 50 skills; a new snapshot (any skill added, removed or changed)
// drops it at once, and a file the watcher does not see (under
// references/, say) shows its new digest within this time.
var ListCacheAge = time.Second

var _ sdk.Executor = (*Server)(nil)

// NewServer returns a Server over lib.
func NewServer(lib *Library) *Server { return &Server{lib: lib} }

// Scope limits the skills a request sees to those visible reports for
// the request's context: find_skills, load_skill, read_skill_file,
// run_skill_script, prompts/get, resources/read, skills/list and
// skills/get treat the others as not installed. The gateway scopes a
// profile's endpoint to the profile's skills. scopeKey names the scope
// of a context, for caching skills/list pages per scope. Call Scope
// before the server is used.
func (s *Server) Scope(visible func(ctx context.Context, skillID string) bool, scopeKey func(ctx context.Context) string) {
	s.visible, s.scopeKey = visible, scopeKey
}

// Info implements sdk.Executor.
func (s *Server) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "skills", Version: "0.1.0", Kinds: []string{"skills"}}, nil
}

var toolDefs = map[string]string{
	ToolFind:         `{"name":"find_skills","title":"Find skills","description":"Search the skills (know-how for a kind of task, with scripts and references). One line per skill, best match first; an empty query lists them all. Then load_skill reads one.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"The task, in a few words; empty lists every skill"},"tag":{"type":"string","description":"Only skills with this tag"},"limit":{"type":"integer","minimum":1,"maximum":100,"description":"Results per page (default 20)"},"cursor":{"type":"string","description":"next_cursor of the previous page"}}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
	ToolLoad:         `{"name":"load_skill","title":"Load a skill","description":"Read a skill's instructions (its SKILL.md), or one section of them, with the list of its files and scripts. Follow them; read_skill_file opens a file they point to, run_skill_script runs a script.","inputSchema":{"type":"object","properties":{"skill":{"type":"string","description":"The skill, as find_skills names it"},"section":{"type":"string","description":"Only this heading's section"}},"required":["skill"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
	ToolReadFile:     `{"name":"read_skill_file","title":"Read a skill file","description":"Read a file of a skill that its instructions point to, such as references/forms.md.","inputSchema":{"type":"object","properties":{"skill":{"type":"string"},"path":{"type":"string","description":"Relative to the skill's folder"},"offset":{"type":"integer","minimum":0,"description":"Byte offset, to read on past a cut"}},"required":["skill","path"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
	ToolRun:          `{"name":"run_skill_script","title":"Run a skill script","description":"Run a script of a skill (a file its instructions name) instead of rewriting it, and get its output.","inputSchema":{"type":"object","properties":{"skill":{"type":"string"},"script":{"type":"string","description":"Relative to the skill's folder, e.g. scripts/fill_form.py or ooxml/scripts/unpack.py; a bare name is looked for under scripts/ first"},"args":{"type":"array","items":{"type":"string"},"maxItems":64,"description":"Command-line arguments"},"input":{"description":"JSON the script reads on stdin as {\"input\": ...}"}},"required":["skill","script"]},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":true}}`,
	ToolReadArtifact: `{"name":"read_artifact","title":"Read a stored output","description":"Page through the full output of a result that was cut to fit (its artifact handle is in the result).","inputSchema":{"type":"object","properties":{"handle":{"type":"string"},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1,"maximum":65536}},"required":["handle"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
}

// ToolNames lists the tools Server serves, in the order they are listed.
func (s *Server) ToolNames() []string {
	n := []string{ToolFind, ToolLoad, ToolReadFile, ToolRun}
	if s.lib.opts.Artifacts != nil {
		n = append(n, ToolReadArtifact)
	}
	return n
}

// Definitions are the tools, prompts and resources of the current
// snapshot. The gateway publishes them again when the snapshot changes.
func (s *Server) Definitions() sdk.Definitions {
	var d sdk.Definitions
	for _, n := range s.ToolNames() {
		d.Tools = append(d.Tools, json.RawMessage(toolDefs[n]))
	}
	for _, sk := range s.lib.Snapshot().Skills() {
		p, _ := json.Marshal(map[string]any{
			"name": PromptName(sk), "title": sk.ID, "description": sk.Meta.Description,
			"_meta": map[string]any{"skillgate/skill": sk.ID},
		})
		d.Prompts = append(d.Prompts, p)
		r, _ := json.Marshal(map[string]any{
			"uri": sk.URI(), "name": sk.Meta.Name, "title": sk.ID, "description": sk.Meta.Description, "mimeType": "text/markdown",
			"_meta": map[string]any{"skillgate/skill": sk.ID},
		})
		d.Resources = append(d.Resources, r)
	}
	d.ResourceTemplates = []json.RawMessage{json.RawMessage(`{"uriTemplate":"skill://{+path}","name":"skill-file","title":"A file of a skill","description":"skill://<skill>/<path> is a file of a skill (skill://<skill>/SKILL.md its instructions)."}`)}
	return d
}

// PromptName is the prompt of a skill: its ID with "/" written "_", since
// prompt names follow tool name rules in the gateway's catalog.
func PromptName(sk *Skill) string { return Namespace(sk.ID) }

// Load implements sdk.Executor: any source gets the Definitions.
func (s *Server) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	return s.Definitions(), nil
}

// Unload implements sdk.Executor.
func (s *Server) Unload(context.Context, string) error { return nil }

// Call implements sdk.Executor for tools/call, prompts/get,
// resources/read, resources/subscribe and resources/unsubscribe,
// completion/complete, skills/list and skills/get.
func (s *Server) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	switch req.Method {
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
		}
		return s.CallTool(ctx, p.Name, p.Arguments, call)
	case "prompts/get":
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return s.prompt(ctx, p.Name)
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return s.readResource(ctx, p.URI)
	case "resources/subscribe", "resources/unsubscribe":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if !strings.HasPrefix(p.URI, "skill://") {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%s: %q is not a skill:// URI", req.Method, p.URI)}
		}
		s.subscribe(p.URI, req.Method == "resources/subscribe")
		return json.RawMessage(`{}`), nil
	case "completion/complete":
		return s.complete(ctx, req.Params)
	case "skills/list":
		return s.listEntries(ctx, req.Params)
	case "skills/get":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return s.getEntry(ctx, p.URI)
	}
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by skills"}
}

// CallTool runs one of the tools by name. Problems a model can fix come
// back as tool errors (isError), not as errors.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	var a struct {
		Query   string          `json:"query"`
		Tag     string          `json:"tag"`
		Limit   *int            `json:"limit"`
		Cursor  string          `json:"cursor"`
		Skill   string          `json:"skill"`
		Section string          `json:"section"`
		Path    string          `json:"path"`
		Offset  int64           `json:"offset"`
		Script  string          `json:"script"`
		Args    scriptArgs      `json:"args"`
		Input   json.RawMessage `json:"input"`
		Handle  string          `json:"handle"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		if name == ToolRun {
			return runError(fmt.Errorf("%s: %s", name, argsMsg(err))), nil
		}
		return toolError("%s: %s", name, argsMsg(err)), nil
	}
	switch name {
	case ToolFind:
		return s.find(ctx, a.Query, a.Tag, a.Limit, a.Cursor), nil
	case ToolLoad:
		return s.load(ctx, a.Skill, a.Section), nil
	case ToolReadFile:
		return s.readFile(ctx, a.Skill, a.Path, a.Offset), nil
	case ToolRun:
		if a.Skill == "" || a.Script == "" {
			return runError(fmt.Errorf("run_skill_script: skill and script are required")), nil
		}
		sk, err := s.lookup(ctx, a.Skill)
		if err != nil {
			return runError(err), nil
		}
		res, err := s.lib.RunScript(ctx, RunRequest{Skill: sk.ID, Script: a.Script, Args: []string(a.Args), Input: a.Input}, call)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return runError(err), nil
		}
		return res, nil
	case ToolReadArtifact:
		st := s.lib.opts.Artifacts
		if st == nil {
			return toolError("read_artifact: this gateway keeps no artifacts"), nil
		}
		limit := 0
		if a.Limit != nil {
			limit = *a.Limit
		}
		c, err := st.Read(a.Handle, int(a.Offset), limit)
		if err != nil {
			return toolError("read_artifact: %v", err), nil
		}
		text := c.Data
		if c.Next >= 0 {
			text += fmt.Sprintf("\n[bytes %d-%d of %d; call again with offset: %d for more]", c.Offset, c.Next, c.Size, c.Next)
		}
		return textResult(text), nil
	}
	return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown skills tool " + name}
}

// lookup finds a skill the request may see by ID or unique name.
func (s *Server) lookup(ctx context.Context, name string) (*Skill, error) {
	snap := s.lib.Snapshot()
	if s.visible == nil {
		return snap.Lookup(name)
	}
	return snap.lookup(name, func(sk *Skill) bool { return s.visible(ctx, sk.ID) })
}

// sees reports whether the request may see sk.
func (s *Server) sees(ctx context.Context, sk *Skill) bool {
	return s.visible == nil || s.visible(ctx, sk.ID)
}

// skills are the skills the request may see, by ID.
func (s *Server) skills(ctx context.Context) []*Skill {
	all := s.lib.Snapshot().Skills()
	if s.visible == nil {
		return all
	}
	out := make([]*Skill, 0, len(all))
	for _, sk := range all {
		if s.visible(ctx, sk.ID) {
			out = append(out, sk)
		}
	}
	return out
}

func (s *Server) find(ctx context.Context, query, tag string, limitArg *int, cursor string) json.RawMessage {
	limit := 20
	if limitArg != nil {
		if *limitArg < 1 || *limitArg > 100 {
			return toolError("find_skills: limit: %d is not between 1 and 100; leave it out for 20 a page", *limitArg)
		}
		limit = *limitArg
	}
	var ms []Match
	for _, m := range s.lib.Snapshot().Find(query, tag) {
		if s.sees(ctx, m.Skill) {
			ms = append(ms, m)
		}
	}
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 || n > len(ms) {
			return toolError("find_skills: cursor: %q is not a next_cursor of this search; leave it out to start from the first page", cursor)
		}
		start = n
	}
	end := min(start+limit, len(ms))
	var b strings.Builder
	total := len(s.skills(ctx))
	switch {
	case len(ms) == 0 && total == 0:
		b.WriteString("No skills are installed.\n")
	case len(ms) == 0:
		fmt.Fprintf(&b, "No skill matches %q; find_skills with an empty query lists all %d.\n", query, total)
	}
	for _, m := range ms[start:end] {
		b.WriteString(m.Skill.Card())
		b.WriteByte('\n')
	}
	if end < len(ms) {
		fmt.Fprintf(&b, "next_cursor: %d (%d more)\n", end, len(ms)-end)
	}
	return textResult(b.String())
}

func (s *Server) load(ctx context.Context, name, section string) json.RawMessage {
	sk, err := s.lookup(ctx, name)
	if err != nil {
		return toolError("load_skill: %v", err)
	}
	var text string
	if section != "" {
		if text, err = s.lib.Section(sk, section); err != nil {
			return toolError("load_skill: %v", err)
		}
	} else if text, _, err = s.lib.Body(sk); err != nil {
		return toolError("load_skill: %v", err)
	}
	footer := s.footer(sk)
	if b := s.lib.outputBudget(); b > 0 && len(text)+len(footer) > b {
		text = fitInstructions(text, section != "", b-len(footer))
	}
	return textResult(strings.TrimRight(text, "\n") + "\n\n" + footer)
}

// fitInstructions fits a body (or one section of it) that is longer than
// budget: its head and tail, then the headings to load instead, or how
// to page through the file when it has none.
func fitInstructions(text string, isSection bool, budget int) string {
	budget = max(budget, 1024)
	secs := outline(text)
	if isSection && len(secs) > 0 {
		secs = secs[1:] // the section's own heading
	}
	var t strings.Builder
	t.WriteString(shape.Text(text, budget/2, ""))
	what := "The instructions are"
	if isSection {
		what = "This section is"
	}
	if len(secs) == 0 {
		fmt.Fprintf(&t, "\n\n%s %d bytes, more than a result may take (%d); read_skill_file with path %s pages through the whole file.\n", what, len(text), budget, FileName)
		return t.String()
	}
	fmt.Fprintf(&t, "\n\n%s %d bytes, more than a result may take; load_skill with section: one of\n", what, len(text))
	room := budget - t.Len() - 200
	for i, sc := range secs {
		line := strings.Repeat("  ", max(sc.Level-secs[0].Level, 0)) + "- " + sc.Title + "\n"
		if len(line) > room {
			fmt.Fprintf(&t, "(and %d more headings; read_skill_file with path %s pages through the whole file)\n", len(secs)-i, FileName)
			break
		}
		room -= len(line)
		t.WriteString(line)
	}
	return t.String()
}

// footer tells the model what else the skill offers, compactly.
func (s *Server) footer(sk *Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nskill %s", sk.ID)
	if sk.Meta.Version != "" {
		b.WriteString(" " + sk.Meta.Version)
	}
	b.WriteByte('\n')
	if len(sk.Scripts) > 0 {
		b.WriteString("scripts (run_skill_script):")
		for _, sc := range sk.Scripts {
			b.WriteString(" " + sc)
			if d := sk.Meta.Scripts[sc].Description; d != "" {
				b.WriteString(" (" + d + ")")
			}
			b.WriteByte(';')
		}
		b.WriteByte('\n')
	}
	if files := listFiles(sk.Dir, "", 40); len(files) > 1 {
		var other []string
		for _, f := range files {
			if f != FileName && !strings.HasPrefix(f, "scripts/") && !strings.HasPrefix(f, "hooks/") && !slices.Contains(sk.Scripts[sk.nScripts:], f) {
				other = append(other, f)
			}
		}
		if len(other) > 0 {
			b.WriteString("files (read_skill_file): " + strings.Join(other, ", ") + "\n")
		}
	}
	r := sk.Meta.Requires
	if len(sk.ToolDirs) > 0 || sk.PipelinesDir != "" || !r.Empty() {
		b.WriteString("activate skill:" + sk.ID + " for its tools")
		// Required skills that are not installed are named as such: it
		// does not bring them.
		snap := s.lib.Snapshot()
		var skillsList []string
		for _, x := range r.Skills {
			if !snap.installed(sk, x) {
				x += " (not installed)"
			}
			skillsList = append(skillsList, x)
		}
		var req []string
		for _, x := range [][2]any{{"skills", skillsList}, {"servers", r.Servers}, {"services", r.Services}, {"tools", r.Tools}} {
			if l := x[1].([]string); len(l) > 0 {
				req = append(req, x[0].(string)+" "+strings.Join(l, ", "))
			}
		}
		if len(req) > 0 {
			b.WriteString(" (it brings " + strings.Join(req, "; ") + ")")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Server) readFile(ctx context.Context, name, rel string, offset int64) json.RawMessage {
	sk, err := s.lookup(ctx, name)
	if err != nil {
		return toolError("read_skill_file: %v", err)
	}
	// A page fits the output budget, base64 and JSON escaping included.
	limit := s.lib.opts.FileCap
	if b := s.lib.outputBudget(); b > 0 {
		limit = min(limit, int64(max(b-1024, 1024)*3/4))
	}
	f, err := s.lib.readFile(sk, rel, offset, limit)
	if err != nil {
		return toolError("read_skill_file: %v", err)
	}
	uri := sk.FileURI(f.Path)
	if f.Binary {
		content := []any{map[string]any{"type": "resource", "resource": map[string]any{
			"uri": uri, "mimeType": mimeOf(f.Path), "blob": base64.StdEncoding.EncodeToString(f.Data),
		}}}
		if f.Truncated || f.Offset > 0 {
			note := fmt.Sprintf("[the blob is bytes %d-%d of %d of %s, not the whole file", f.Offset, f.End, f.Size, f.Path)
			if f.Truncated {
				note += fmt.Sprintf("; read_skill_file with offset: %d for the next part, and join the parts' bytes", f.End)
			}
			content = append(content, map[string]any{"type": "text", "text": note + "]"})
		}
		out, _ := json.Marshal(map[string]any{"content": content})
		return out
	}
	text := string(f.Data)
	if f.Invalid {
		text = fmt.Sprintf("[%s is not valid UTF-8 (Latin-1, say): its invalid bytes show as \uFFFD; resources/read %s gives the exact bytes]\n", f.Path, uri) + text
	}
	if f.Truncated {
		text += fmt.Sprintf("\n[bytes %d-%d of %d; read_skill_file with offset: %d for more]", f.Offset, f.End, f.Size, f.End)
	}
	return textResult(text)
}

func mimeOf(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".md":
		return "text/markdown"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	}
	if m := mime.TypeByExtension(path.Ext(p)); m != "" {
		return m
	}
	return "application/octet-stream"
}

func (s *Server) prompt(ctx context.Context, name string) (json.RawMessage, error) {
	var sk *Skill
	for _, c := range s.skills(ctx) {
		if PromptName(c) == name {
			sk = c
			break // the first by ID has the prompt (see scanner.promptNames)
		}
	}
	if sk == nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
	}
	body, _, err := s.lib.Body(sk)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"description": sk.Meta.Description,
		"messages": []any{map[string]any{"role": "user", "content": map[string]any{
			"type": "text", "text": strings.TrimRight(body, "\n") + "\n\n" + s.footer(sk),
		}}},
	})
}

// resolveURI splits skill://<skill-path>/<file> into the skill and the
// file ("SKILL.md" when the URI names the skill alone).
func (s *Server) resolveURI(ctx context.Context, uri string) (*Skill, string, error) {
	return s.resolveURIIn(s.lib.Snapshot(), func(sk *Skill) bool { return s.sees(ctx, sk) }, uri)
}

// resolveURIIn is resolveURI in snap among the skills sees accepts (nil:
// all). The path is read as skills list it, escaped (my%20file.md), and
// as a hand-written URI may have it, unescaped (my file.md, 100%.md): the
// escaped reading wins when it names a file of a skill.
func (s *Server) resolveURIIn(snap *Snapshot, sees func(*Skill) bool, uri string) (*Skill, string, error) {
	rest, ok := strings.CutPrefix(uri, "skill://")
	if !ok {
		return nil, "", fmt.Errorf("%q is not a skill:// URI", uri)
	}
	rest = strings.TrimSuffix(rest, "/")
	if dec, err := url.PathUnescape(rest); err == nil && dec != rest {
		sk, file, ok := resolvePath(snap, sees, dec)
		if ok && (file == FileName || fileExists(filepath.Join(sk.Dir, filepath.FromSlash(file)))) {
			return sk, file, nil
		}
		if sk2, file2, ok2 := resolvePath(snap, sees, rest); ok2 && fileExists(filepath.Join(sk2.Dir, filepath.FromSlash(file2))) {
			return sk2, file2, nil
		}
		if ok {
			return sk, file, nil
		}
	}
	if sk, file, ok := resolvePath(snap, sees, rest); ok {
		return sk, file, nil
	}
	return nil, "", fmt.Errorf("%w in %q", ErrUnknownSkill, uri)
}

// resolvePath splits <skill-path>/<file>, unescaped, into a skill of snap
// that sees accepts (nil: all) and the file ("SKILL.md" when the path
// names the skill alone). Team skills come first: acme/refunds/... is
// the team skill's before it is a file of skill acme.
func resolvePath(snap *Snapshot, sees func(*Skill) bool, rest string) (*Skill, string, bool) {
	segs := strings.SplitN(rest, "/", 3)
	byID := func(id string) *Skill {
		if sk := snap.byID[id]; sk != nil && (sees == nil || sees(sk)) {
			return sk
		}
		return nil
	}
	if len(segs) >= 2 {
		if sk := byID(segs[0] + "/" + segs[1]); sk != nil {
			if len(segs) == 3 && segs[2] != "" {
				return sk, segs[2], true
			}
			return sk, FileName, true
		}
	}
	if sk := byID(segs[0]); sk != nil {
		if file := strings.TrimPrefix(strings.TrimPrefix(rest, segs[0]), "/"); file != "" {
			return sk, file, true
		}
		return sk, FileName, true
	}
	return nil, "", false
}

func (s *Server) readResource(ctx context.Context, uri string) (json.RawMessage, error) {
	sk, file, err := s.resolveURI(ctx, uri)
	if err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	f, fi, err := openInSkill(sk.Dir, file)
	if err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", uri, err)}
	}
	defer f.Close()
	const maxResource = 16 << 20
	if fi.Size() > maxResource {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%s is %d bytes; read_skill_file pages through it", uri, fi.Size())}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	c := map[string]any{"uri": uri, "mimeType": mimeOf(file)}
	switch {
	case isText(data):
		c["text"] = string(data)
	case isTextType(file):
		// Exact bytes, and a word on why text comes as a blob.
		c["blob"] = base64.StdEncoding.EncodeToString(data)
		c["_meta"] = map[string]string{"skillgate/note": file + " is not valid UTF-8 text (Latin-1, say): its bytes are sent as they are, base64-encoded"}
	default:
		c["blob"] = base64.StdEncoding.EncodeToString(data)
	}
	return json.Marshal(map[string]any{"contents": []any{c}})
}

func isText(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b[:min(len(b), 8000)]), 0)
}

// SkillEntry is a skill as the skills extension (SEP-2640) lists it.
type SkillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []SkillResource `json:"resources"`
}

// SkillResource is one file of a SkillEntry.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Limits of the skills extension for one skill.
const (
	maxEntryFiles = 512
	maxEntryBytes = 16 << 20
)

// entryFile is one file of a skill, stat'ed for its skills-extension entry.
type entryFile struct {
	rel  string
	path string
	size int64
	mod  time.Time
}

// entryFiles lists the files of sk's entry with their sizes, without
// reading them, and fails when they total more than the skills extension
// takes for one skill, naming the largest.
func entryFiles(sk *Skill) ([]entryFile, error) {
	var files []entryFile
	var total int64
	largest := -1
	for _, rel := range listFiles(sk.Dir, "", maxEntryFiles) {
		if !sk.listed(rel) {
			continue
		}
		f, fi, err := openInSkill(sk.Dir, rel)
		if err != nil {
			continue // a symlink leading out is not part of the skill
		}
		f.Close()
		files = append(files, entryFile{rel: rel, path: filepath.Join(sk.Dir, filepath.FromSlash(rel)), size: fi.Size(), mod: fi.ModTime()})
		total += fi.Size()
		if largest < 0 || fi.Size() > files[largest].size {
			largest = len(files) - 1
		}
	}
	if total > maxEntryBytes {
		big := files[largest]
		return nil, fmt.Errorf("%w: skill %s: its files total %d bytes, more than the %d a skill may hold for skills/list; the largest is %s (%d bytes): move large files out of the skill folder",
			ErrTooLarge, sk.ID, total, maxEntryBytes, big.rel, big.size)
	}
	return files, nil
}

// Entry builds the skills-extension entry of sk: its frontmatter verbatim
// and every file with its SHA-256 digest. A file's digest is kept while
// its size and modification time stay the same. A skill whose files
// total more than 16 MiB has no entry: the error (ErrTooLarge) names the
// largest file.
func (s *Server) Entry(sk *Skill) (SkillEntry, error) {
	e := SkillEntry{URI: sk.URI(), Frontmatter: sk.Meta.Raw}
	if e.Frontmatter == nil {
		e.Frontmatter = map[string]any{"name": sk.Meta.Name, "description": sk.Meta.Description}
	}
	files, err := entryFiles(sk)
	if err != nil {
		return e, err
	}
	for _, ef := range files {
		d, err := s.digest(sk, ef)
		if err != nil {
			return e, err
		}
		e.Resources = append(e.Resources, SkillResource{URI: sk.FileURI(ef.rel), Digest: d.sum, Size: d.size})
	}
	return e, nil
}

// digested is a file's digest, with the stat it was made for.
type digested struct {
	sum  string
	size int64
	mod  time.Time
}

// digest returns the SHA-256 digest of one file of sk, from the cache
// when the file's size and modification time are those it was made for.
func (s *Server) digest(sk *Skill, ef entryFile) (digested, error) {
	s.digestMu.Lock()
	d, ok := s.digests[ef.path]
	s.digestMu.Unlock()
	if ok && d.size == ef.size && d.mod.Equal(ef.mod) {
		return d, nil
	}
	f, fi, err := openInSkill(sk.Dir, ef.rel)
	if err != nil {
		return d, fmt.Errorf("skill %s: %w", sk.ID, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxEntryBytes+1))
	if err != nil {
		return d, fmt.Errorf("skill %s: read %s: %w", sk.ID, ef.rel, err)
	}
	if n > maxEntryBytes {
		return d, fmt.Errorf("%w: skill %s: %s grew past %d bytes while it was read", ErrTooLarge, sk.ID, ef.rel, maxEntryBytes)
	}
	d = digested{sum: "sha256:" + hex.EncodeToString(h.Sum(nil)), size: n, mod: fi.ModTime()}
	if n == fi.Size() {
		s.digestMu.Lock()
		if s.digests == nil || len(s.digests) > 4*maxEntryFiles*8 {
			s.digests = map[string]digested{}
		}
		s.digests[ef.path] = d
		s.digestMu.Unlock()
	}
	return d, nil
}

// EntryProblems reports the skills of snap the skills extension cannot
// list (skills/list leaves them out, skills/get fails): those whose files
// total more than 16 MiB, naming the largest file.
func EntryProblems(snap *Snapshot) []Problem {
	var out []Problem
	for _, sk := range snap.Skills() {
		if _, err := entryFiles(sk); err != nil {
			out = append(out, Problem{Path: sk.mdRel, Msg: strings.TrimPrefix(err.Error(), ErrTooLarge.Error()+": "), Warning: true})
		}
	}
	return out
}

func (s *Server) listEntries(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "skills/list: " + argsMsg(err)}
		}
	}
	snap := s.lib.Snapshot()
	all := s.skills(ctx)
	start := 0
	if p.Cursor != nil && *p.Cursor != "" {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("skills/list: cursor %q is not a nextCursor this server gave; leave it out to start from the first page", *p.Cursor)}
		}
		start = n
	}
	key := pageKey{start: start}
	if s.scopeKey != nil {
		key.scope = s.scopeKey(ctx)
	}
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock() // one build at a time; the others wait for it
	if c, ok := s.pages[key]; ok && c.snap == snap && time.Since(c.at) < ListCacheAge {
		return slices.Clone(c.body), nil
	}
	end := min(start+50, len(all))
	entries := []SkillEntry{}
	for _, sk := range all[start:end] {
		e, err := s.Entry(sk)
		if err != nil {
			// Left out of the list, and said once per snapshot.
			s.warnOnce(snap, sk, err)
			continue
		}
		entries = append(entries, e)
	}
	res := map[string]any{"resultType": "complete", "skills": entries, "ttlMs": 60000, "cacheScope": "public"}
	if end < len(all) {
		res["nextCursor"] = strconv.Itoa(end)
	}
	body, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if s.pages == nil || len(s.pages) > 64 {
		s.pages = map[pageKey]listPage{}
	}
	s.pages[key] = listPage{snap: snap, at: time.Now(), body: body}
	return slices.Clone(body), nil
}

// warnOnce logs why sk is not in skills/list, once per snapshot.
func (s *Server) warnOnce(snap *Snapshot, sk *Skill, err error) {
	s.digestMu.Lock()
	if s.warnedSnap != snap {
		s.warnedSnap, s.warned = snap, map[string]string{}
	}
	seen := s.warned[sk.ID] == err.Error()
	s.warned[sk.ID] = err.Error()
	s.digestMu.Unlock()
	if !seen {
		s.lib.log.Warn("skill left out of skills/list", "skill", sk.ID, "err", err)
	}
}

func (s *Server) getEntry(ctx context.Context, uri string) (json.RawMessage, error) {
	sk, file, err := s.resolveURI(ctx, uri)
	if err != nil || file != FileName || !strings.HasSuffix(uri, "/"+FileName) {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%q is not the SKILL.md of a skill served here", uri)}
	}
	e, err := s.Entry(sk)
	if errors.Is(err, ErrTooLarge) {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "skills/get: " + strings.TrimPrefix(err.Error(), ErrTooLarge.Error()+": ")}
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"resultType": "complete", "skill": e, "ttlMs": 60000, "cacheScope": "public"})
}

func textResult(text string) json.RawMessage {
	out, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	return out
}

func toolError(format string, a ...any) json.RawMessage {
	out, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": fmt.Sprintf(format, a...)}}, "isError": true})
	return out
}

// StatusDenied is the _meta["skillgate/status"] of a run a hook denied or
// failed; a run that could not start (unknown skill or script) is "error",
// like a script that failed.
const StatusDenied = "denied"

// runError is the result of a run_skill_script that did not run or was
// stopped by a hook: an error with its status, as every run's result has.
func runError(err error) json.RawMessage {
	status := "error"
	if errors.Is(err, ErrDenied) {
		status = StatusDenied
	}
	out, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": err.Error()}}, "isError": true,
		"_meta": map[string]string{"skillgate/status": status}})
	return out
}

// argsMsg says what is wrong with a call's arguments in the model's
// terms, not Go's.
func argsMsg(err error) string {
	var ae argError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := "a " + te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int64:
			want = "an integer"
		case reflect.String:
			want = "text (a JSON string)"
		case reflect.Slice:
			want = "a list of strings"
		case reflect.Pointer:
			want = "an integer"
		}
		return fmt.Sprintf("%s: want %s, got a JSON %s", te.Field, want, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "the arguments are not valid JSON: " + se.Error()
	}
	return "the arguments must be a JSON object of the tool's inputSchema: " + err.Error()
}

// fileStamp is what a subscribed file looked like: gone (zero), or its
// size and modification time.
type fileStamp struct {
	exists bool
	size   int64
	mod    time.Time
}

// OnResourceUpdated sets what the server calls with a subscribed skill://
// URI when its file changes, is created or goes away (CheckSubscriptions).
// Call it before the server is used.
func (s *Server) OnResourceUpdated(notify func(uri string)) { s.notify = notify }

// subscribe starts (on) or stops watching uri for CheckSubscriptions. A
// URI of no skill is accepted too: the skill may come later.
func (s *Server) subscribe(uri string, on bool) {
	st := s.stampOf(uri)
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if !on {
		delete(s.subs, uri)
		return
	}
	if s.subs == nil {
		s.subs = map[string]fileStamp{}
	}
	if _, ok := s.subs[uri]; !ok {
		s.subs[uri] = st
	}
}

// stampOf stats the file of a skill:// URI, whatever endpoint asked (the
// front end subscribes once per URI).
func (s *Server) stampOf(uri string) fileStamp {
	sk, file, err := s.resolveURIIn(s.lib.Snapshot(), nil, uri)
	if err != nil {
		return fileStamp{}
	}
	f, fi, err := openInSkill(sk.Dir, file)
	if err != nil {
		return fileStamp{}
	}
	f.Close()
	return fileStamp{exists: true, size: fi.Size(), mod: fi.ModTime()}
}

// CheckSubscriptions stats the files of the subscribed URIs and calls the
// OnResourceUpdated function with each one that changed since the last
// check (or the subscription). The gateway calls it when the library
// publishes a snapshot and every WatchSubscriptions interval.
func (s *Server) CheckSubscriptions() {
	s.subMu.Lock()
	uris := make([]string, 0, len(s.subs))
	for uri := range s.subs {
		uris = append(uris, uri)
	}
	s.subMu.Unlock()
	for _, uri := range uris {
		st := s.stampOf(uri)
		s.subMu.Lock()
		old, ok := s.subs[uri]
		changed := ok && old != st
		if changed {
			s.subs[uri] = st
		}
		s.subMu.Unlock()
		if changed && s.notify != nil {
			s.notify(uri)
		}
	}
}

// WatchSubscriptions runs CheckSubscriptions every interval until ctx is
// done: files other than SKILL.md (references/, assets/) change without
// a new snapshot.
func (s *Server) WatchSubscriptions(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.CheckSubscriptions()
		}
	}
}

// scriptArgs are run_skill_script's command-line arguments: strings, and
// numbers and booleans as the command line writes them (models send
// "args": [5, true] as often as ["5", "true"]).
type scriptArgs []string

// UnmarshalJSON implements json.Unmarshaler.
func (a *scriptArgs) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return argError("args: want a list of strings, got " + jsonKind(b))
	}
	out := make(scriptArgs, len(raw))
	for i, r := range raw {
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return err
		}
		switch v := v.(type) {
		case string:
			out[i] = v
		case float64, bool:
			out[i] = string(bytes.TrimSpace(r)) // as written: 1e3 stays 1e3, 10 stays 10
		default:
			return argError(fmt.Sprintf("args[%d]: want a string (or a number or true/false), got %s", i, jsonKind(r)))
		}
	}
	*a = out
	return nil
}

// argError is what is wrong with one argument, said in full.
type argError string

func (e argError) Error() string { return string(e) }

// jsonKind names the kind of a JSON value as argsMsg does ("a JSON
// string").
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	kind := "number"
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		kind = "object"
	case b[0] == '[':
		kind = "array"
	case b[0] == '"':
		kind = "string"
	case b[0] == 't' || b[0] == 'f':
		kind = "bool"
	case b[0] == 'n':
		return "null"
	}
	return "a JSON " + kind
}
