package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/internal/oneline"
	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/toolspec"
	"github.com/skillgate/skillgate/skills"
)

// A skill's pipelines/ folder is compiled with the pipelines room's loader
// into a source of its own, "skill-pipelines:<id>", namespaced by the
// skill like its tool folders (<skill>__<pipeline>) and carrying the skill,
// so activate skill:<id> shows them. Runs share the pipelines' runner and
// its history. The set is compiled again when the skills change, when the
// folder's files change (the pipelines' poll) and when the other sources'
// tools change; a pipeline naming a tool not in the catalog is held back
// with its problem in Status, as for the config's pipelines.

// skillPipelinesPrefix starts the source ID of a skill's pipelines.
const skillPipelinesPrefix = "skill-pipelines:"

// skillPipelinesOrder places skills' pipelines after their tools.
const skillPipelinesOrder = skillToolOrder + 1<<16

// skillPipes is the compiled pipelines of one skill.
type skillPipes struct {
	src    *source
	dir    string
	stamp  string // filesStamp of dir when compiled
	sig    string // toolsSignature when compiled
	byName map[string]*pipelines.Pipeline
	defs   []json.RawMessage
	told   string // the problems last logged, to log a change only
	// problems are those of the last compile (under the room's pipeMu).
	problems []*pipelines.Error
	// pending is, for each step tool last compiled as waiting on its
	// server (pendingTool), why: a change of it compiles them again.
	pending map[string]string
}

// refreshSkillPipelines brings the skills' pipeline sources in line with
// the skills snapshot, the pipeline files and the catalog.
func (g *Gateway) refreshSkillPipelines(ctx context.Context) {
	g.mu.Lock()
	room := g.skills
	cfg := g.cfg
	closed := g.closed
	g.mu.Unlock()
	if room == nil || closed {
		return
	}
	room.pipeLoad.Lock()
	defer room.pipeLoad.Unlock()
	want := map[string]string{} // skill ID -> pipelines dir
	order := map[string]int{}
	byID := map[string]*skills.Skill{}
	for i, sk := range room.lib.Snapshot().Skills() {
		if sk.PipelinesDir != "" {
			want[sk.ID] = sk.PipelinesDir
			order[sk.ID] = i
			byID[sk.ID] = sk
		}
	}
	room.pipeMu.Lock()
	var gone []string
	for id, sp := range room.pipes {
		if dir, ok := want[id]; !ok || dir != sp.dir {
			gone = append(gone, id)
		}
	}
	room.pipeMu.Unlock()
	for _, id := range gone {
		g.dropSkillPipelines(ctx, room, id)
	}
	if len(want) == 0 {
		return
	}
	snap := g.store.Load()
	sig := toolsSignature(snap)
	sep := cfg.Names.Separator
	if sep == "" {
		sep = catalog.DefaultSeparator
	}
	env := SkillsEnvRule(cfg)
	for _, id := range slices.Sorted(maps.Keys(want)) {
		dir := want[id]
		stamp := filesStamp([]string{dir})
		room.pipeMu.Lock()
		sp := room.pipes[id]
		room.pipeMu.Unlock()
		if sp != nil && sp.stamp == stamp && sp.sig == sig && !g.pendingChanged(sp.pending) {
			continue
		}
		if sp == nil {
			sid := skillPipelinesPrefix + id
			sp = &skillPipes{dir: dir, src: &source{
				id: sid, execName: "pipelines", namespace: strings.ReplaceAll(id, "/", "_"),
				order: skillPipelinesOrder + order[id], kind: "pipelines", skill: id,
				timeout: time.Duration(cfg.Limits.MaxRequestTimeout),
				st:      SourceStatus{Name: sid, Executor: "pipelines", State: "starting", Since: time.Now()},
			}}
			sp.src.setExecutor(skillPipelinesExec{g: g, room: room, skill: id})
		}
		// The skill's own tools count before their source has published
		// them (at start they load alongside): a step calling one is not
		// a problem while it loads.
		own := skillOwnTools(byID[id], sep, env)
		loader := PipelineLoader(cfg, func(name string) bool {
			if it, ok := snap.Tool(name); ok {
				return it.Source != sp.src.id
			}
			return slices.Contains(own, name)
		})
		ns := sp.src.namespace
		loader.ToolName = func(name string) string { return catalog.ExposedName(ns, sep, name) }
		loader.Inline = nil
		pending := map[string]string{}
		loader.ToolPending = func(name string) string {
			why := g.pendingTool(name)
			if why != "" {
				pending[name] = why
			}
			return why
		}
		list, err := loader.Load(dir)
		problems := PipelineProblems(err)
		defs := make([]json.RawMessage, len(list))
		byName := make(map[string]*pipelines.Pipeline, len(list))
		for i, p := range list {
			defs[i] = p.Tool()
			byName[p.Name] = p
		}
		same := slices.EqualFunc(defs, sp.defs, func(a, b json.RawMessage) bool { return string(a) == string(b) })
		sp.stamp, sp.sig, sp.defs, sp.pending = stamp, sig, defs, pending
		room.pipeMu.Lock()
		sp.byName, sp.problems = byName, problems
		room.pipeMu.Unlock()

		s := sp.src
		published := s.pipelinesLoaded(len(list), problems)
		room.pipeMu.Lock()
		fresh := room.pipes[id] == nil
		room.pipes[id] = sp
		room.pipeMu.Unlock()
		if fresh {
			g.mu.Lock()
			g.putSource(s)
			g.mu.Unlock()
		}
		if !same || !published {
			g.publish(s, sdk.Definitions{Tools: defs})
		}
		// Told once per change, and when the problems clear.
		told := ""
		for _, p := range problems {
			told += p.Error() + "\n"
		}
		switch {
		case told == sp.told:
		case told != "":
			g.log.Warn("skill pipelines with problems are not served", "skill", id, "served", len(list), "problems", len(problems), "first", problems[0].Error())
		default:
			g.log.Info("skill pipelines served", "skill", id, "served", len(list))
		}
		sp.told = told
	}
}

// heldBackSkillPipeline says why tool name, a skill's pipeline, is not
// served: its own problems from the last compile ("pipeline "report" of
// skill weekly has problems and is not served: file:line: ..."), or ""
// when none is about it (see heldBackPipeline).
func (g *Gateway) heldBackSkillPipeline(name string) string {
	g.mu.Lock()
	room := g.skills
	sep := cmp.Or(g.cfg.Names.Separator, catalog.DefaultSeparator)
	g.mu.Unlock()
	if room == nil {
		return ""
	}
	room.pipeMu.Lock()
	defer room.pipeMu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(room.pipes)) {
		sp := room.pipes[id]
		var own []*pipelines.Error
		for _, p := range sp.problems {
			if !p.Warning && p.Pipeline != "" && catalog.ExposedName(sp.src.namespace, sep, p.Pipeline) == name {
				own = append(own, p)
			}
		}
		if len(own) == 0 {
			continue
		}
		msg := fmt.Sprintf("pipeline %q of skill %s has problems and is not served: %s", own[0].Pipeline, id, oneline.Cut(own[0].Error(), 300))
		switch n := len(own) - 1; n {
		case 0:
		case 1:
			msg += " (and 1 more problem)"
		default:
			msg += fmt.Sprintf(" (and %d more problems)", n)
		}
		return msg + "; `skillgate skills validate` lists them"
	}
	return ""
}

// skillOwnTools are the exposed names of the tools of sk's tools/ folders
// that the gateway serves: whose tool.yaml loads and asks for no variable
// env refuses (see skillToolSource).
func skillOwnTools(sk *skills.Skill, sep string, env skills.EnvRule) []string {
	var out []string
	for _, d := range sk.ToolDirs {
		if tool, err := toolspec.Load(d); err == nil && len(env.ToolEnvProblems(d, d, tool)) == 0 {
			out = append(out, catalog.ExposedName(skills.Namespace(sk.ID), sep, tool.Name))
		}
	}
	return out
}

// dropSkillPipelines stops serving a skill's pipelines.
func (g *Gateway) dropSkillPipelines(ctx context.Context, room *skillsRoom, id string) {
	room.pipeMu.Lock()
	sp := room.pipes[id]
	delete(room.pipes, id)
	room.pipeMu.Unlock()
	sp.src.stop(ctx)
	g.mu.Lock()
	if g.sources[sp.src.id] == sp.src {
		g.dropSource(sp.src.id)
	}
	g.mu.Unlock()
	g.removeSource(sp.src.id)
}

// skillPipelinesExec runs one skill's pipelines in process.
type skillPipelinesExec struct {
	g     *Gateway
	room  *skillsRoom
	skill string
}

var _ sdk.Executor = skillPipelinesExec{}

func (e skillPipelinesExec) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "pipelines", Version: e.g.opts.Version, Kinds: []string{"pipelines"}}, nil
}

func (e skillPipelinesExec) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	return sdk.Definitions{}, fmt.Errorf("%w: skill pipelines are published by the gateway", sdk.ErrUnsupported)
}

func (e skillPipelinesExec) Unload(context.Context, string) error { return nil }

func (e skillPipelinesExec) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	name, args, err := pipelineCall(req)
	if err != nil {
		return nil, err
	}
	var p *pipelines.Pipeline
	e.room.pipeMu.Lock()
	if sp := e.room.pipes[e.skill]; sp != nil {
		p = sp.byName[name]
	}
	e.room.pipeMu.Unlock()
	if p == nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("skill %s has no pipeline %q loaded (it was removed or has problems; see `skillgate servers`)", e.skill, name)}
	}
	return e.g.pipes.run(ctx, p, args, call)
}
