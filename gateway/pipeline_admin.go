package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/names"
	"github.com/skillgate/skillgate/internal/suggest"

	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// pipelineGroup is the admin group of the pipeline management tools,
// activated as @pipeline; its tools are pipeline__list, pipeline__create
// and so on, next to the CLI's `skillgate pipeline`.
const pipelineGroup = "pipeline"

func init() {
	adminGroups[pipelineGroup] = "Manage pipelines at runtime: list, show, create, update and delete them (validated, then saved to the first pipelines folder), and read the history of recent runs"
	adminExecutors[pipelineGroup] = func(g *Gateway) sdk.Executor { return pipelineAdmin{g} }
}

var pipelineAdminTools = []json.RawMessage{
	json.RawMessage(`{"name":"list","title":"List pipelines","description":"Every pipeline the gateway serves (tool name, description, file:line, steps), every problem of the pipelines it does not serve, and the warnings of those it does.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
	json.RawMessage(`{"name":"get","title":"Show a pipeline","description":"One pipeline's YAML source, its step graph (text and Mermaid) and its tool definition.","inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"the pipeline's name (without pipelines__)"}},"required":["name"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
	json.RawMessage(`{"name":"create","title":"Create a pipeline","description":"Validate a new pipeline (YAML, see docs/PIPELINES.md) and save it as <name>.yaml in the first pipelines folder; it is served as pipelines__<name> when this returns. Nothing is saved when it has problems; they are returned with line:col.","inputSchema":{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"yaml":{"type":"string","description":"the pipeline; its name: may be left out"}},"required":["name","yaml"]},"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`),
	json.RawMessage(`{"name":"update","title":"Update a pipeline","description":"Validate a new version of an existing pipeline and replace its file atomically. Nothing changes when it has problems.","inputSchema":{"type":"object","properties":{"name":{"type":"string"},"yaml":{"type":"string"}},"required":["name","yaml"]},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}}`),
	json.RawMessage(`{"name":"delete","title":"Delete a pipeline","description":"Delete a pipeline's file; pipelines__<name> is gone when this returns. Pipelines that called it are reported.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}}`),
	json.RawMessage(`{"name":"runs","title":"Pipeline runs","description":"Recent pipeline runs, newest first, with each step's status, start, duration, attempts and error; or one run by id (run ids appear in failed results).","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"one run's id"},"pipeline":{"type":"string","description":"only this pipeline's runs"},"limit":{"type":"integer","minimum":1,"default":20}}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
}

// pipelineAdmin serves the pipeline group's tools in process.
type pipelineAdmin struct{ g *Gateway }

var _ sdk.Executor = pipelineAdmin{}

func (a pipelineAdmin) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "gateway", Version: a.g.opts.Version, Kinds: []string{"admin"}}, nil
}

func (a pipelineAdmin) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Source != adminSourceID(pipelineGroup) {
		return sdk.Definitions{}, fmt.Errorf("%w: %s", sdk.ErrUnknownSource, req.Source)
	}
	return sdk.Definitions{Tools: pipelineAdminTools}, nil
}

func (a pipelineAdmin) Unload(context.Context, string) error { return nil }

type pipelineAdminArgs struct {
	Name     string `json:"name"`
	YAML     string `json:"yaml"`
	ID       string `json:"id"`
	Pipeline string `json:"pipeline"`
	Limit    int    `json:"limit"`
}

func (a pipelineAdmin) Call(ctx context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	if req.Method != "tools/call" {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by the gateway's pipeline tools"}
	}
	var p struct {
		Name      string            `json:"name"`
		Arguments pipelineAdminArgs `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	args := p.Arguments
	ps := a.g.pipes
	switch p.Name {
	case "list":
		return ps.listResult(), nil
	case "get":
		return ps.getResult(args.Name), nil
	case "create", "update":
		return ps.save(ctx, p.Name == "create", args.Name, args.YAML), nil
	case "delete":
		return ps.remove(ctx, args.Name), nil
	case "runs":
		return ps.runsResult(args), nil
	}
	return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown pipeline tool " + p.Name}
}

// pipelineInfo describes a served pipeline.
type pipelineInfo struct {
	Name        string   `json:"name"`
	Tool        string   `json:"tool"`
	Description string   `json:"description,omitempty"`
	Pos         string   `json:"pos"`
	Steps       []string `json:"steps"`
}

func infoOf(p *pipelines.Pipeline) pipelineInfo {
	in := pipelineInfo{Name: p.Name, Tool: p.ToolName, Description: p.Description, Pos: p.Pos.String()}
	for _, s := range p.Steps {
		in.Steps = append(in.Steps, s.ID+" -> "+s.Tool)
	}
	return in
}

func (ps *pipelineSet) listResult() json.RawMessage {
	list, problems := ps.snapshot()
	var text strings.Builder
	infos := make([]pipelineInfo, 0, len(list))
	for _, p := range list {
		infos = append(infos, infoOf(p))
		fmt.Fprintf(&text, "%s (%s, %d steps) at %s: %s\n", p.ToolName, p.Name, len(p.Steps), p.Pos, p.Description)
	}
	probs := make([]string, 0, len(problems))
	for _, e := range problems {
		probs = append(probs, e.Error())
		fmt.Fprintf(&text, "problem: %s\n", e)
	}
	warns := []string{}
	for _, e := range pipelineWarnings(list) {
		warns = append(warns, e.Error())
		fmt.Fprintf(&text, "%s\n", e)
	}
	if len(list) == 0 && len(problems) == 0 {
		text.WriteString("no pipelines; create one with pipeline__create\n")
	}
	return okResult(text.String(), map[string]any{"pipelines": infos, "problems": probs, "warnings": warns})
}

func (ps *pipelineSet) getResult(name string) json.RawMessage {
	p := ps.lookup(name)
	if p == nil {
		return toolError(fmt.Sprintf("no pipeline %q is served; pipeline__list shows the ones that are", name))
	}
	src, err := pipelineSource(p)
	if err != nil {
		return toolError(err.Error())
	}
	var def any
	_ = json.Unmarshal(p.Tool(), &def)
	text := fmt.Sprintf("# %s\n%s\n%s", p.Pos, src, p.Graph())
	return okResult(text, map[string]any{
		"pipeline": infoOf(p), "yaml": src, "graph": p.Graph(), "mermaid": p.Mermaid(), "tool": def,
	})
}

// pipelineSource returns the YAML text p was read from: its file, or the
// whole config for an inline pipeline.
func pipelineSource(p *pipelines.Pipeline) (string, error) {
	b, err := os.ReadFile(p.Pos.File)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p.Pos.File, err)
	}
	return string(b), nil
}

// ownFile returns the file p alone is defined in, inside a pipelines
// folder, or why the management tools may not change it.
func (ps *pipelineSet) ownFile(p *pipelines.Pipeline, dirs []string) (string, error) {
	file := p.Pos.File
	inDir := false
	for _, d := range dirs {
		if filepath.Clean(filepath.Dir(file)) == filepath.Clean(d) {
			inDir = true
		}
	}
	if !inDir {
		return "", fmt.Errorf("pipeline %s is defined at %s, not in a pipelines folder (inline in the config?); edit it there", p.Name, p.Pos)
	}
	list, _ := ps.snapshot()
	for _, o := range list {
		if o != p && o.Pos.File == file {
			return "", fmt.Errorf("%s holds other pipelines besides %s (such as %s); edit that file by hand", file, p.Name, o.Name)
		}
	}
	return file, nil
}

// save validates yaml as pipeline name and writes it: a new file in the
// first pipelines folder (create), or over its own file (update).
func (ps *pipelineSet) save(ctx context.Context, create bool, name, src string) json.RawMessage {
	if !names.Valid(name) {
		return toolError(fmt.Sprintf("name %q: use 1 to 64 of a-z A-Z 0-9 _ -", name))
	}
	ps.loadMu.Lock()
	defer ps.loadMu.Unlock()
	g := ps.g
	g.mu.Lock()
	cfg := g.cfg
	g.mu.Unlock()
	dirs := cfg.Pipelines.Dirs
	if len(dirs) == 0 {
		return toolError("no pipelines folder to save to; add pipelines: {dirs: [./pipelines]} to " + cfg.Source)
	}
	cur := ps.lookup(name)
	var path string
	switch {
	case create && cur != nil:
		return toolError(fmt.Sprintf("pipeline %s already exists at %s; use pipeline__update to change it", name, cur.Pos))
	case create:
		path = filepath.Join(dirs[0], name+".yaml")
		if _, err := os.Stat(path); err == nil {
			return toolError(fmt.Sprintf("%s exists but is not served (it has problems; see pipeline__list); fix or delete it first", path))
		}
	case cur == nil:
		return toolError(fmt.Sprintf("no pipeline %q is served; use pipeline__create for a new one", name))
	default:
		var err error
		if path, err = ps.ownFile(cur, dirs); err != nil {
			return toolError(err.Error())
		}
	}

	// Compile it alone, knowing the catalog's tools and the other
	// pipelines by name; the name must be the one asked for.
	list, _ := ps.snapshot()
	others := map[string]bool{}
	for _, p := range list {
		if p.Name != name {
			others[p.ToolName] = true
		}
	}
	snap := g.store.Load()
	known := catalogTools(snap)
	l := PipelineLoader(cfg, func(t string) bool { return others[t] || known(t) })
	l.ToolNames = func() []string { return append(slices.Sorted(maps.Keys(others)), catalogToolNames(snap)()...) }
	l.Inline = nil
	l.ToolPending = g.pendingTool
	got, err := l.Parse(strings.NewReader(src), path)
	if err != nil {
		return problemsResult("not saved: the pipeline has problems", PipelineProblems(err))
	}
	if len(got) != 1 {
		return toolError(fmt.Sprintf("not saved: the YAML holds %d pipelines; send exactly one", len(got)))
	}
	if got[0].Name != name {
		return toolError(fmt.Sprintf("not saved: the YAML's name: is %q but you asked to save %q; make them the same or leave name: out", got[0].Name, name))
	}
	for _, p := range list {
		if p.Name != name && p.ToolName == got[0].ToolName {
			return toolError(fmt.Sprintf("not saved: %s is already served by %s at %s", p.ToolName, p.Name, p.Pos))
		}
	}
	// Then with every other pipeline, served or not, as the reload after
	// the write will: another definition of the name (in a file with
	// problems, or inline), a loop of pipelines calling each other, or
	// arguments another pipeline passes to this one, must not make the
	// reload hold back this one or one served now.
	warnings, refused := ps.checkWith(cfg, snap, name, path, src)
	if refused != nil {
		return refused
	}
	if err := writeAtomic(path, []byte(src)); err != nil {
		return toolError("not saved: " + err.Error())
	}
	ps.reloadLocked(ctx)
	verb := "updated"
	if create {
		verb = "created"
	}
	msg := fmt.Sprintf("%s %s: %s", verb, got[0].ToolName, path)
	for _, w := range warnings {
		msg += "\n" + w.Error()
	}
	return ps.afterChange(msg, name, true)
}

// checkWith compiles every pipeline of cfg with src as the file at path,
// as the reload after writing it would, knowing the tools of snap. It
// returns the warnings of pipeline name, or the result refusing to save:
// name would not be served (it has problems only the others show, such
// as another definition of its name, or a loop), or a pipeline served now
// would not be.
func (ps *pipelineSet) checkWith(cfg *config.Config, snap *catalog.Snapshot, name, path, src string) ([]*pipelines.Error, json.RawMessage) {
	list, before := ps.snapshot()
	l := PipelineLoader(cfg, catalogTools(snap))
	l.ToolNames = catalogToolNames(snap)
	l.ToolSchema = PipelineToolSchema(snap)
	l.ToolPending = ps.g.pendingTool
	served := make(map[string]string, len(list))
	for _, p := range list {
		served[p.Name] = p.Pos.File
	}
	l.Served = func(n string) string { return served[n] }
	l.Overlay = map[string][]byte{path: []byte(src)}
	after, err := l.Load(cfg.Pipelines.Dirs...)
	problems := PipelineProblems(err)
	var mine, fresh []*pipelines.Error
	for _, e := range problems {
		if e.Pos.File == path {
			mine = append(mine, e)
		}
		if !slices.ContainsFunc(before, func(b *pipelines.Error) bool { return b.Error() == e.Error() }) {
			fresh = append(fresh, e)
		}
	}
	var self *pipelines.Pipeline
	servedAfter := map[string]bool{}
	for _, p := range after {
		servedAfter[p.Name+"\x00"+p.Pos.File] = true
		if p.Name == name && p.Pos.File == path {
			self = p
		}
	}
	var lost []string
	for _, p := range list {
		if p.Name != name && !servedAfter[p.Name+"\x00"+p.Pos.File] {
			lost = append(lost, fmt.Sprintf("%s (%s)", p.Name, p.Pos))
		}
	}
	switch {
	case self == nil && len(mine) > 0:
		return nil, problemsResult("not saved: with the other pipelines, it has problems", mine)
	case self == nil:
		return nil, problemsResult("not saved: with the other pipelines, it would not be served", fresh)
	case len(lost) > 0:
		return nil, problemsResult(fmt.Sprintf("not saved: %s would no longer be served", strings.Join(lost, ", ")), fresh)
	}
	// A problem at path left it served: another definition of the name,
	// which stays held back as it was.
	return self.Warnings, nil
}

// remove deletes pipeline name's file.
func (ps *pipelineSet) remove(ctx context.Context, name string) json.RawMessage {
	ps.loadMu.Lock()
	defer ps.loadMu.Unlock()
	p := ps.lookup(name)
	if p == nil {
		return toolError(fmt.Sprintf("no pipeline %q is served; pipeline__list shows the ones that are", name))
	}
	ps.g.mu.Lock()
	dirs := ps.g.cfg.Pipelines.Dirs
	ps.g.mu.Unlock()
	path, err := ps.ownFile(p, dirs)
	if err != nil {
		return toolError(err.Error())
	}
	if err := os.Remove(path); err != nil {
		return toolError("not deleted: " + err.Error())
	}
	ps.reloadLocked(ctx)
	return ps.afterChange(fmt.Sprintf("deleted %s: %s", p.ToolName, path), name, false)
}

// afterChange reports a change, with the problems the reload found (such
// as pipelines calling one that was deleted).
func (ps *pipelineSet) afterChange(msg, name string, wantServed bool) json.RawMessage {
	list, problems := ps.snapshot()
	served := false
	for _, p := range list {
		served = served || p.Name == name
	}
	probs := make([]string, 0, len(problems))
	text := msg + "\n"
	if wantServed && !served {
		text += "warning: it is saved but not served; see the problems below\n"
	}
	for _, e := range problems {
		probs = append(probs, e.Error())
		text += "problem: " + e.Error() + "\n"
	}
	return okResult(text, map[string]any{"message": msg, "served": served, "problems": probs})
}

func problemsResult(head string, problems []*pipelines.Error) json.RawMessage {
	lines := []string{head + ":"}
	for _, e := range problems {
		lines = append(lines, e.Error())
	}
	return toolError(strings.Join(lines, "\n"))
}

// unknownPipeline says that no pipeline is named name (none is served,
// held back with problems, a skill's, or in the run history), with the
// nearest name; "" when one is.
func (ps *pipelineSet) unknownPipeline(name string) string {
	known := map[string]bool{}
	list, problems := ps.snapshot()
	for _, p := range list {
		known[p.Name] = true
	}
	for _, p := range problems {
		if p.Pipeline != "" {
			known[p.Pipeline] = true
		}
	}
	for _, r := range ps.runner.Runs() {
		known[r.Pipeline] = true
	}
	g := ps.g
	g.mu.Lock()
	room := g.skills
	g.mu.Unlock()
	if room != nil {
		room.pipeMu.Lock()
		for _, sp := range room.pipes {
			for n := range sp.byName {
				known[n] = true
			}
		}
		room.pipeMu.Unlock()
	}
	if known[name] {
		return ""
	}
	names := slices.Sorted(maps.Keys(known))
	msg := fmt.Sprintf("no pipeline is named %q", name)
	switch near, ok := suggest.Closest(name, names); {
	case ok:
		msg += fmt.Sprintf("; did you mean %q?", near)
	case len(names) == 0:
		msg += "; the gateway serves no pipelines"
	default:
		msg += "; pipeline__list lists the pipelines"
	}
	return msg
}

func (ps *pipelineSet) runsResult(args pipelineAdminArgs) json.RawMessage {
	if args.ID != "" {
		rec, ok := ps.runner.Record(args.ID)
		if !ok {
			return toolError(fmt.Sprintf("no run %q is kept; pipeline__runs lists the ones that are", args.ID))
		}
		return okResult(FormatRun(rec), map[string]any{"run": rec})
	}
	limit := args.Limit
	if limit <= 0 {
		limit = 20
	}
	var out []pipelines.Record
	var text strings.Builder
	for _, r := range ps.runner.Runs() {
		if len(out) == limit {
			break
		}
		if args.Pipeline != "" && r.Pipeline != args.Pipeline {
			continue
		}
		out = append(out, r)
		fmt.Fprintf(&text, "%s %s %s %s %s\n", r.ID, r.Started.Format(time.RFC3339), r.Pipeline, r.Status, r.Duration.Round(time.Microsecond))
	}
	if len(out) == 0 && args.Pipeline != "" {
		if msg := ps.unknownPipeline(args.Pipeline); msg != "" {
			return toolError(msg)
		}
	}
	if len(out) == 0 {
		text.WriteString("no runs yet\n")
	}
	if out == nil {
		out = []pipelines.Record{}
	}
	return okResult(text.String(), map[string]any{"runs": out})
}

// FormatRun writes a run record as text: the run, then one line per step.
func FormatRun(r pipelines.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s of %s: %s in %s (started %s)\n", r.ID, r.Pipeline, r.Status, r.Duration.Round(time.Microsecond), r.Started.Format(time.RFC3339Nano))
	if r.Error != "" {
		fmt.Fprintf(&b, "  error: %s\n", r.Error)
	}
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  %-16s %-10s %10s  attempts %d", s.ID, s.Status, s.Duration.Round(time.Microsecond), s.Attempts)
		if s.Items > 0 {
			fmt.Fprintf(&b, ", items %d (%d failed", s.Items, s.ItemsFailed)
			if s.ItemsCanceled > 0 {
				fmt.Fprintf(&b, ", %d canceled", s.ItemsCanceled)
			}
			b.WriteString(")")
		}
		if s.Queued >= time.Millisecond {
			fmt.Fprintf(&b, ", queued %s", s.Queued.Round(time.Millisecond))
		}
		fmt.Fprintf(&b, "  %s", s.Tool)
		if s.Error != "" {
			fmt.Fprintf(&b, ": %s", s.Error)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// writeAtomic replaces path with data: a temporary file in the same folder
// (named so the folder poll ignores it), synced, then renamed over path.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// okResult is a CallToolResult with text and structured content.
func okResult(text string, v any) json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text}},
		"structuredContent": v,
	})
	if err != nil {
		return toolError(err.Error())
	}
	return b
}
