package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Admin groups are the gateway's own management tools. Each is a source of
// the in-process "gateway" executor whose tools stay hidden until a client
// activates the group (@<group>), in every disclosure mode.
//
// Later features add their groups here (registering tools, pipelines,
// services); this one reports on the gateway itself.
var adminGroups = map[string]string{
	"admin": "The gateway's own state: servers and the token cost of each endpoint's tool list",
}

// adminExecutors serve the groups other than "admin"; a feature registers
// its group here and in adminGroups from an init func of its own file.
var adminExecutors = map[string]func(*Gateway) sdk.Executor{}

// adminWrites are the management tools that change what the gateway runs,
// by group: they write tools, pipelines or skills repositories that then
// run as the gateway's user, or start and remove containers. admin.writes
// decides who may call them (writeRefusal); the groups' other tools only
// read, and every client may call them. A group's tool that is not marked
// readOnlyHint must be listed here (TestAdminWritesClassified).
var adminWrites = map[string][]string{
	toolGroup:     {"register", "build_wasm", "update", "delete", "rollback"},
	pipelineGroup: {"create", "update", "delete"},
	skillGroup:    {"repo_add", "repo_update", "repo_remove"},
	serviceGroup:  {"up", "down", "rm", "prune"},
}

// isAdminWrite reports whether it is one of adminWrites.
func isAdminWrite(it *catalog.Item) bool {
	return it.Group != "" && it.Kind == catalog.Tool && it.Source == adminSourceID(it.Group) &&
		slices.Contains(adminWrites[it.Group], it.Original)
}

// writeRefusal returns the isError result that refuses ctx's caller a
// call of it, or nil when admin.writes lets the caller make it (or it is
// no write). Under "trusted" (the default) the stdio client, HTTP requests
// that presented a token of auth.tokens and the gateway's own commands
// (frontend.TransportProcess) may; anything else may not, a request that
// carries no Origin included. Tools called for a client by a pipeline or
// a script carry that client's Origin.
func (g *Gateway) writeRefusal(ctx context.Context, it *catalog.Item) json.RawMessage {
	if !isAdminWrite(it) {
		return nil
	}
	g.mu.Lock()
	cfg := g.cfg
	g.mu.Unlock()
	where := writesWhere(cfg)
	o, ok := frontend.OriginOf(ctx)
	var msg string
	switch {
	case cfg.Admin.Writes == config.WritesAll:
		return nil
	case cfg.Admin.Writes == config.WritesNone:
		msg = it.Name + " " + writesNone(cfg)
	case ok && (o.Transport == frontend.TransportStdio || o.Transport == frontend.TransportProcess || o.Token):
		return nil
	case ok && o.Transport == frontend.TransportHTTP:
		msg = fmt.Sprintf("%s changes what the gateway runs (what it writes runs as the gateway's user), so over HTTP it needs "+
			"a token of auth.tokens, and the config sets none: add auth: {tokens: [\"${SKILLGATE_TOKEN}\"]} and send Authorization: Bearer <token>, "+
			"or run the client over stdio (skillgate run --stdio), or set admin.writes: all %s if every client that reaches "+
			"this port may run code as the gateway's user", it.Name, where)
	default:
		msg = fmt.Sprintf("%s changes what the gateway runs, and this call comes from no client the gateway trusts "+
			"(admin.writes: trusted admits the stdio client and HTTP requests with a token of auth.tokens); set admin.writes: all %s to allow it", it.Name, where)
	}
	g.log.Warn("management tool refused (admin.writes)", "tool", it.Name, "transport", o.Transport, "writes", cfg.Admin.Writes)
	return toolError(msg)
}

// writesWhere says where admin.writes is, or would be, set in cfg.
func writesWhere(cfg *config.Config) string {
	if p := cfg.Where("admin.writes"); p.Line > 0 {
		return "at " + p.String()
	}
	if cfg.Source == "<builtin>" {
		return "in a config file (the built-in default has none: run with -c FILE)"
	}
	return "in " + cmp.Or(cfg.Source, "skillgate.yaml")
}

// writesNone is why admin.writes: none refuses a write tool, after its name.
func writesNone(cfg *config.Config) string {
	return fmt.Sprintf("changes what the gateway runs, and admin.writes: none (%s) lets no client call it; "+
		"set admin.writes: trusted to let the stdio client and HTTP requests with a token of auth.tokens call it", writesWhere(cfg))
}

// adminSourceID is the catalog source of an admin group. The colon keeps it
// apart from server names, which cannot contain one.
func adminSourceID(group string) string { return "gateway:" + group }

// adminExec serves the admin groups' tools in process.
type adminExec struct{ g *Gateway }

var _ sdk.Executor = adminExec{}

func (a adminExec) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "gateway", Version: a.g.opts.Version, Kinds: []string{"admin"}}, nil
}

func (a adminExec) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Source != adminSourceID("admin") {
		return sdk.Definitions{}, fmt.Errorf("%w: %s", sdk.ErrUnknownSource, req.Source)
	}
	return sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"servers","title":"Gateway servers","description":"Every server and executor source of the gateway with its state, pid, restarts, tool count and last error.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
		json.RawMessage(`{"name":"stats","title":"Tool list cost","description":"Size of tools/list per endpoint: tools listed, bytes and estimated tokens, next to listing every tool.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
	}}, nil
}

func (a adminExec) Unload(context.Context, string) error { return nil }

func (a adminExec) Call(_ context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	if req.Method != "tools/call" {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: req.Method + " is not served by the gateway's admin tools"}
	}
	var p struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	var v any
	var text string
	switch p.Name {
	case "servers":
		st := a.g.Status()
		v = map[string]any{"servers": st}
		for _, s := range st {
			text += fmt.Sprintf("%s (%s): %s, %d tools", s.Name, s.Executor, s.State, s.Tools)
			if s.LastError != "" {
				text += ", last error: " + s.LastError
			}
			text += "\n"
		}
	case "stats":
		st := a.g.Stats()
		v = map[string]any{"endpoints": st}
		for _, s := range st {
			text += fmt.Sprintf("%s (%s): %d tools listed, %d bytes, ~%d tokens; all %d tools: %d bytes, ~%d tokens\n",
				s.Endpoint, s.Mode, s.Listed, s.Bytes, s.Tokens, s.Served, s.AllBytes, s.AllTokens)
		}
	default:
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown admin tool " + p.Name}
	}
	return json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text}},
		"structuredContent": v,
	})
}

// startAdmin publishes the admin groups.
func (g *Gateway) startAdmin(ctx context.Context) {
	// One catalog rebuild for every group, not one per group: this is on
	// the path of the gateway's start.
	var loaded []*source
	var srcs []catalog.Source
	for i, group := range slices.Sorted(maps.Keys(adminGroups)) {
		var ex sdk.Executor = adminExec{g}
		if f := adminExecutors[group]; f != nil {
			ex = f(g)
		}
		s := &source{
			id: adminSourceID(group), execName: "gateway", namespace: group, order: 1<<20 + i,
			kind: "admin", internal: true, group: group,
			st: SourceStatus{Name: adminSourceID(group), Executor: "gateway", State: "starting", Since: time.Now()},
		}
		s.setExecutor(ex)
		g.mu.Lock()
		g.putSource(s)
		g.mu.Unlock()
		defs, err := ex.Load(ctx, sdk.LoadRequest{Source: s.id, Kind: "admin"})
		if err != nil {
			g.log.Error("admin group not served", "group", group, "err", err)
			continue
		}
		s.loaded = true
		loaded = append(loaded, s)
		srcs = append(srcs, s.catalogSource(defs))
	}
	g.setSource(srcs...)
	for _, s := range loaded {
		s.setState("ready", "")
	}
}

// newDisclosure builds the disclosure rules of cfg for the gateway gw
// returns (nil until New has made it; the rules ask it only once
// serving): what activating a skill brings, and why a tool or server has
// no tools yet.
func newDisclosure(cfg *config.Config, gw func() *Gateway) *disclosure.Disclosure {
	opts := disclosure.Options{
		Mode:          cfg.Disclosure,
		Pinned:        append(slices.Clone(cfg.Pinned), skillsPinned(cfg)...),
		Bundles:       map[string]disclosure.Bundle{},
		Groups:        adminGroups,
		Servers:       cfg.ServerOrder,
		Skills:        func(name string) ([]string, bool) { return gw().skillTargets(name) },
		ToolPending:   func(name string) (string, string) { return gw().toolPending(name) },
		ServerPending: func(name string) string { return gw().serverPending(name) },
	}
	if len(cfg.Services) == 0 {
		opts.IdleGroups = []string{serviceGroup} // nothing for its tools to act on
	}
	if cfg.Admin.Writes == config.WritesNone {
		why := "it " + writesNone(cfg)
		opts.Withheld = func(it *catalog.Item) string {
			if isAdminWrite(it) {
				return why
			}
			return ""
		}
	}
	for name, b := range cfg.Bundles {
		opts.Bundles[name] = disclosure.Bundle{Description: b.Description, Include: b.Include}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		p := cfg.Profiles[name]
		tools, pinned := p.Tools, p.Pinned
		if len(p.Skills) > 0 {
			// The skills tools are how a client uses the profile's skills
			// (they see only those); served and listed unless allow: or
			// deny: take them out.
			tools = append(slices.Clone(tools), profileSkillsTools...)
			pinned = append(slices.Clone(pinned), profileSkillsTools...)
		}
		opts.Profiles = append(opts.Profiles, disclosure.Profile{
			Name: name, Description: p.Description, Mode: p.Disclosure,
			Servers: p.Servers, Skills: p.Skills, Tools: tools,
			Allow: p.Allow, Deny: p.Deny, Pinned: pinned,
		})
	}
	return disclosure.New(opts)
}

// Stats measures the tools/list of every endpoint on the current catalog.
func (g *Gateway) Stats() []disclosure.EndpointStats {
	return g.disclosure().Stats(g.store.Load())
}
