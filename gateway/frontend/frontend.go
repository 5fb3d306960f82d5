package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Router runs requests against the sources behind the catalog. The front
// end calls it concurrently from many sessions.
type Router interface {
	// Call sends one MCP request (params already in the source's own names)
	// to the item's source; call receives progress, notifications and
	// server-to-client requests while it runs.
	Call(ctx context.Context, item *catalog.Item, method string, params json.RawMessage, call sdk.Call) (json.RawMessage, error)
}

// Options configure a front end.
type Options struct {
	// Name and Version are announced to clients in serverInfo.
	Name, Version string
	// Instructions are sent to clients at initialization.
	Instructions string
	// Logger receives the front end's log; nil discards.
	Logger *slog.Logger
	// HTTP holds the HTTP endpoint's settings.
	HTTP HTTPOptions
	// Disclosure decides what each endpoint and session lists and runs the
	// meta-tools; nil lists everything on the default endpoint only.
	Disclosure *disclosure.Disclosure
	// StdioProfile is the profile served over stdio; "" is the default endpoint.
	StdioProfile string
	// Methods serve JSON-RPC methods mcp-go does not know (an extension's),
	// on every endpoint and over stdio.
	Methods map[string]Method
	// Extensions are announced in the initialize result's capabilities,
	// e.g. {"io.modelcontextprotocol/skills": {}}.
	Extensions map[string]any
	// SessionIdle ends a 2025-11-25-era session unused for this long, as a
	// DELETE would (expiry.go); default 24 h.
	SessionIdle time.Duration
	// UnconfirmedIdle ends sooner a session whose client sent nothing in
	// it after initialize; default 2 min (sessionlimit.go).
	UnconfirmedIdle time.Duration
	// MaxSessions caps the 2025-11-25-era sessions alive at once; an
	// initialize past it is refused with 503. Default 10,000.
	MaxSessions int
	// MaxListenStreams caps the 2026-07-28 subscriptions/listen streams
	// open at once over HTTP; one past it is refused with 503. Default
	// 1,000 (owner.go).
	MaxListenStreams int
	// Serving, when not nil, is closed once the catalog is to be served:
	// until then a request that reads it waits (the gateway's start wait,
	// so that a client's first tools/list is complete), while initialize,
	// ping, logging/setLevel, server/discover and notifications are
	// answered at once (startgate.go).
	Serving <-chan struct{}
}

// Server is the gateway's MCP front end.
type Server struct {
	router Router
	opts   Options
	log    *slog.Logger
	mcp    *server.MCPServer
	snap   atomic.Pointer[catalog.Snapshot]
	// headerBound names the tools whose parameters are bound to HTTP
	// headers (x-mcp-header, as mcp-go reads it): a 2026-07-28 call of one
	// goes through mcp-go, which checks the headers. Published before the
	// snapshot it belongs to.
	headerBound atomic.Pointer[map[string]bool]

	updateMu sync.Mutex
	// reg is what Publish last registered with mcp-go (guarded by
	// updateMu; see publish.go).
	reg      registry
	sessions sync.Map // session id mcp-go issued -> *session
	// nsessions counts sessions and the places initializes in flight
	// reserved (sessionlimit.go).
	nsessions atomic.Int64
	// nlisten counts the 2026-07-28 subscriptions/listen streams open
	// over HTTP (owner.go).
	nlisten  atomic.Int64
	clients  sync.Map // session id -> server.ClientSession, every session mcp-go registered
	inflight sync.Map // session id + "\x00" + request id -> *inflightCall
	// pending holds the server-to-client requests fast-path calls made:
	// session id + "\x00" + the request's JSON id -> chan of the answer.
	pending    sync.Map
	requestSeq atomic.Uint64
	subs       subscriptions // resource subscriptions of clients, see subscriptions.go
	// roundTrips holds the 2026-07-28 calls parked until their clients
	// come back with the input they asked for: requestState -> *roundTrip.
	roundTrips sync.Map
	parked     atomic.Int64 // their requests waiting for answers
	rtLimits   roundTripLimits
	bodyLimits bodyLimits    // request bodies' deadlines (stall.go)
	notified   atomic.Uint64 // notifications sent to all sessions so far
	raw        *stash
	// oddReads holds the URIs of reads handed to mcp-go under a stand-in
	// (oddread.go).
	oddReads *stash
	disc     atomic.Pointer[disclosure.Disclosure]
	swept    atomic.Int64 // when expireSessions last looked, unix ns
	streams  sync.Map     // *openStream -> struct{}: the long-lived streams (streams.go)
	// access holds the HTTP access rules (origins, tokens, body cap) a
	// reload may change; the endpoint path is fixed at Handler.
	access atomic.Pointer[HTTPOptions]
	// modernMeta is the _meta of every 2026-07-28 result.
	modernMeta []byte
	// stdioCaps are the capabilities for server-to-client requests the
	// stdio client declared in initialize (clientCaps).
	stdioCaps atomic.Uint32
	// levelSet holds the legacy sessions (by id; "stdio" too) whose
	// clients sent logging/setLevel: their level applies to the log
	// messages of their calls too (see clientCall.Notify).
	levelSet sync.Map
	// gated holds the sessions that began before Options.Serving closed,
	// with the list_changed held back from them (startgate.go): session
	// id -> *gatedSession.
	gated sync.Map
}

// New builds a front end serving an empty catalog until Update is called.
func New(router Router, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Name == "" {
		opts.Name = "skillgate"
	}
	if opts.Disclosure == nil {
		opts.Disclosure = disclosure.New(disclosure.Options{})
	}
	s := &Server{router: router, opts: opts, log: opts.Logger, raw: newStash(), oddReads: newStashOf("sguri"), rtLimits: roundTripLimits{parkTimeout, keepFinished}, bodyLimits: defaultBodyLimits}
	s.disc.Store(opts.Disclosure)
	s.SetAccess(opts.HTTP)
	s.modernMeta = s.serverInfoMeta()
	hooks := &server.Hooks{}
	// First: a subscription reads the catalog too.
	hooks.AddOnRequestInitialization(s.holdWhileStarting)
	hooks.AddOnRequestInitialization(s.onRequest)
	hooks.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		s.clients.Store(cs.SessionID(), cs)
		s.noteSessionStart(cs.SessionID())
	})
	hooks.AddAfterSetLevel(s.noteSetLevel)
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		s.clients.Delete(cs.SessionID())
		s.levelSet.Delete(cs.SessionID())
		s.gated.Delete(cs.SessionID())
		go s.endSubscriptions(cs.SessionID())
	})
	srvOpts := []server.ServerOption{
		server.WithHooks(hooks),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithLogging(),
		// No WithElicitation and no EnableSampling: they declare
		// "elicitation" and "sampling" server capabilities, which no MCP
		// revision defines (they are the client's); relaying those
		// requests to clients needs neither.
		server.WithRecovery(),
		server.WithPromptCompletionProvider(completer{s}),
		server.WithResourceCompletionProvider(completer{s}),
		server.WithToolFilter(rawListFilter),
		server.WithToolFilter(s.servedTools),
		server.WithPromptFilter(rawPromptFilter),
		server.WithPromptFilter(s.servedPrompts),
	}
	if opts.Instructions != "" {
		srvOpts = append(srvOpts, server.WithInstructions(opts.Instructions))
	}
	if len(opts.Extensions) > 0 {
		srvOpts = append(srvOpts, server.WithExtensions(opts.Extensions))
	}
	s.mcp = server.NewMCPServer(opts.Name, opts.Version, srvOpts...)
	s.headerBound.Store(&map[string]bool{})
	s.snap.Store(catalog.Build(nil, catalog.Options{}))
	for _, name := range disclosure.Names {
		def, _ := disclosure.MetaTool(name)
		t, err := toolFromRaw(&catalog.Item{Name: name, Raw: def})
		if err != nil {
			panic("frontend: meta-tool " + name + ": " + err.Error())
		}
		s.reg.meta = append(s.reg.meta, server.ServerTool{Tool: t, Handler: s.metaHandler(name)})
	}
	s.mcp.AddTools(s.reg.meta...)
	s.mcp.AddResourceTemplate(anyResource(), server.ResourceTemplateHandlerFunc(s.resourceHandler()))
	return s
}

// Disclosure returns the disclosure rules being served.
func (s *Server) Disclosure() *disclosure.Disclosure { return s.disc.Load() }

// Snapshot returns the catalog snapshot being served.
func (s *Server) Snapshot() *catalog.Snapshot { return s.snap.Load() }

// Notify sends a source-level notification to the clients it concerns:
// notifications/resources/updated to the sessions subscribed to its URI
// (see subscriptions.go), anything else to every connected client.
func (s *Server) Notify(method string, params json.RawMessage) {
	var m map[string]any
	if len(params) > 0 {
		if err := json.Unmarshal(params, &m); err != nil {
			s.log.Warn("notification dropped: params are not an object", "method", method, "err", err)
			return
		}
	}
	switch method {
	case string(mcp.MethodNotificationResourceUpdated):
		uri, _ := m["uri"].(string)
		s.deliverUpdate(uri, m)
	case string(mcp.MethodNotificationMessage):
		s.deliverLog(m)
	default:
		s.mcp.SendNotificationToAllClients(method, m)
	}
	s.notified.Add(1)
}

// deliverLog sends a source's log message that belongs to no call to every
// session whose logging/setLevel lets its level through (mcp-go's default
// for a session that set none is "error"). 2026-07-28 clients have no
// session: that revision sends log messages only for a request that asked
// for them.
func (s *Server) deliverLog(params map[string]any) {
	lvl, _ := params["level"].(string)
	level := mcp.LoggingLevel(lvl)
	s.clients.Range(func(_, v any) bool {
		cs := v.(server.ClientSession)
		sl, ok := cs.(server.SessionWithLogging)
		if !ok || !cs.Initialized() || !level.ShouldSendTo(sl.GetLogLevel()) {
			return true
		}
		if err := s.mcp.SendNotificationToSpecificClient(cs.SessionID(), string(mcp.MethodNotificationMessage), params); err != nil {
			s.log.Debug("log message not delivered", "session", cs.SessionID(), "err", err)
		}
		return true
	})
}

// notificationWait bounds how long a result waits for its notifications to
// be written (see delivery).
const notificationWait = 250 * time.Millisecond

// mayBindHeaders reports whether a tool definition may carry an
// x-mcp-header annotation as mcp-go reads it: the key in any letter case
// (encoding/json matches keys case-insensitively) or spelled with \u
// escapes. It spares most tools mcp-go's exact check, which decodes the
// whole input schema again (a fifth of a first publish).
func mayBindHeaders(raw []byte) bool {
	const key = "x-mcp-header"
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for i := bytes.IndexAny(raw, "xX"); i >= 0 && i+len(key) <= len(raw); {
		if bytes.EqualFold(raw[i:i+len(key)], []byte(key)) {
			return true
		}
		j := bytes.IndexAny(raw[i+1:], "xX")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// toolFromRaw builds mcp-go's Tool for the typed path (stdio lists and
// tools/call dispatch), keeping both schemas as the source's bytes. The
// schemas are cut out before the rest is decoded: mcp-go's schema decoder
// (property order, typed properties) was most of a first publish's cost,
// for a value thrown away.
func toolFromRaw(it *catalog.Item) (mcp.Tool, error) {
	var t mcp.Tool
	if !json.Valid(it.Raw) {
		return t, errors.New("the definition is not valid JSON")
	}
	var in, out []byte
	rest := make([]byte, 0, len(it.Raw))
	rest = append(rest, '{')
	isObject := jsonscan.Members(it.Raw, func(key, value []byte, start, end int) {
		switch string(key) {
		case "inputSchema":
			in = value
			return
		case "outputSchema":
			out = value
			return
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(append(jsonscan.AppendString(rest, string(key)), ':'), value...)
	})
	if !isObject {
		return t, errors.New("the definition is not a JSON object")
	}
	if err := json.Unmarshal(append(rest, '}'), &t); err != nil {
		return t, err
	}
	for _, sc := range []struct {
		name  string
		value []byte
	}{{"inputSchema", in}, {"outputSchema", out}} {
		if len(sc.value) > 0 && sc.value[0] != '{' && string(sc.value) != "null" {
			return t, fmt.Errorf("%s is not a JSON object", sc.name)
		}
	}
	t.Name = it.Name
	// encoding/json matches keys case-insensitively: a stray "InputSchema"
	// member must not leave a typed schema next to the raw one.
	t.InputSchema, t.OutputSchema = mcp.ToolInputSchema{}, mcp.ToolOutputSchema{}
	t.RawInputSchema = json.RawMessage(`{"type":"object"}`)
	if len(in) > 0 && string(in) != "null" {
		t.RawInputSchema = in
	}
	if len(out) > 0 && string(out) != "null" {
		t.RawOutputSchema = out
	}
	return t, nil
}

func (s *Server) toolHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		it, ok := s.snap.Load().Tool(name)
		if !ok || !s.Disclosure().Serves(s.discRequest(ctx), it) {
			// Gone since mcp-go looked it up (a reload): as mcp-go refuses a
			// tool it does not have.
			return nil, s.passError(&sdk.RPCError{Code: sdk.CodeInvalidParams,
				Message: fmt.Sprintf("tool '%s' not found: tools/list names the tools this endpoint serves", name)})
		}
		args := req.Params.RawArguments
		if len(args) == 0 && req.Params.Arguments != nil {
			var err error
			if args, err = json.Marshal(req.Params.Arguments); err != nil {
				return nil, err
			}
		}
		params, token := buildParams(map[string]any{"name": it.Original}, "arguments", args, req.Params.Meta)
		raw, err := s.callSource(ctx, it, string(mcp.MethodToolsCall), name, params, req.Params.Meta, req.Params.MultiRoundTripParams, token)
		deliveryFrom(ctx).wait(ctx, notificationWait)
		if err != nil {
			return nil, s.passErrors(err)
		}
		if !json.Valid(raw) {
			return nil, fmt.Errorf("tool %s returned a result that is not JSON", name)
		}
		return &mcp.CallToolResult{Result: mcp.Result{Meta: markedMeta(s.raw.put(raw))}, Content: []mcp.Content{}}, nil
	}
}

// metaHandler runs a meta-tool on mcp-go's typed path.
func (s *Server) metaHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.RawArguments
		if len(args) == 0 && req.Params.Arguments != nil {
			var err error
			if args, err = json.Marshal(req.Params.Arguments); err != nil {
				return nil, err
			}
		}
		var token mcp.ProgressToken
		if req.Params.Meta != nil {
			token = req.Params.Meta.ProgressToken
		}
		raw, err := s.Disclosure().CallMeta(ctx, s.snap.Load(), s.discRequest(ctx), name, args, s.invoke, s.newCall(ctx, token))
		deliveryFrom(ctx).wait(ctx, notificationWait)
		if err != nil {
			return nil, s.passErrors(err)
		}
		return &mcp.CallToolResult{Result: mcp.Result{Meta: markedMeta(s.raw.put(raw))}, Content: []mcp.Content{}}, nil
	}
}

// invoke runs a catalog tool for call_tool, as a direct tools/call would.
func (s *Server) invoke(ctx context.Context, it *catalog.Item, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	members := []member{{"name", encode(it.Original)}}
	if len(args) > 0 {
		members = append(members, member{"arguments", args})
	}
	raw, err := s.router.Call(ctx, it, string(mcp.MethodToolsCall), insertMembers([]byte("{}"), members), call)
	if err == nil && !json.Valid(raw) {
		err = fmt.Errorf("tool %s returned a result that is not JSON", it.Name)
	}
	return raw, err
}

// servedTools is mcp-go's tool filter: it keeps the tools the request's
// endpoint serves (Disclosure.Serves). mcp-go applies it to a tools/call
// too, with the one tool called, and refuses a tool it drops exactly as a
// tool that does not exist (-32602, "tool 'x' not found"): a profile's
// client cannot tell a tool outside the profile from no tool at all.
func (s *Server) servedTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	snap, d, req := s.snap.Load(), s.Disclosure(), s.discRequest(ctx)
	return keepOnly(tools, func(t mcp.Tool) bool {
		it, ok := snap.Tool(t.Name)
		return ok && d.Serves(req, it) || disclosure.IsMeta(t.Name)
	})
}

// servedPrompts is servedTools for prompts (prompts/get).
func (s *Server) servedPrompts(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	snap, d, req := s.snap.Load(), s.Disclosure(), s.discRequest(ctx)
	return keepOnly(prompts, func(p mcp.Prompt) bool {
		it, ok := snap.Prompt(p.Name)
		return ok && d.Serves(req, it)
	})
}

// keepOnly returns the items keep keeps; items itself when that is all of
// them, else a new slice (the filter does not change what mcp-go gave it).
func keepOnly[T any](items []T, keep func(T) bool) []T {
	for i, v := range items {
		if keep(v) {
			continue
		}
		out := slices.Clone(items[:i])
		for _, v := range items[i+1:] {
			if keep(v) {
				out = append(out, v)
			}
		}
		return out
	}
	return items
}

// profileKey carries the endpoint's profile name in a request's context.
type profileKey struct{}

// stdioSession is the session id mcp-go gives the stdio client.
const stdioSession = "stdio"

// discRequest tells disclosure who asks, from a handler's context: the
// endpoint's profile and, for a client of a session-based era, its session.
func (s *Server) discRequest(ctx context.Context) disclosure.Request {
	req := disclosure.Request{}
	req.Profile, _ = ctx.Value(profileKey{}).(string)
	if server.IsModernRequest(ctx) {
		return req
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		req.Session = cs.SessionID()
	}
	return req
}

func (s *Server) promptHandler(name string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		it, ok := s.snap.Load().Prompt(name)
		if !ok || !s.Disclosure().Serves(s.discRequest(ctx), it) {
			return nil, s.passError(&sdk.RPCError{Code: sdk.CodeInvalidParams,
				Message: fmt.Sprintf("prompt '%s' not found: prompts/list names the prompts this endpoint serves", name)})
		}
		var args json.RawMessage
		if req.Params.Arguments != nil {
			args, _ = json.Marshal(req.Params.Arguments)
		}
		params, token := buildParams(map[string]any{"name": it.Original}, "arguments", args, req.Params.Meta)
		raw, err := s.callSource(ctx, it, string(mcp.MethodPromptsGet), name, params, req.Params.Meta, req.Params.MultiRoundTripParams, token)
		deliveryFrom(ctx).wait(ctx, notificationWait)
		if err != nil {
			return nil, s.passErrors(err)
		}
		if !json.Valid(raw) {
			return nil, fmt.Errorf("prompt %s: the result is not JSON", name)
		}
		return &mcp.GetPromptResult{Result: mcp.Result{Meta: markedMeta(s.raw.put(raw))}, Messages: []mcp.PromptMessage{}}, nil
	}
}

func (s *Server) resourceHandler() server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		// One the request's endpoint does not serve is answered as one that
		// does not exist (noResource).
		if uri, ok := s.oddReadURI(req.Params.URI); ok {
			req.Params.URI = uri
		}
		it, ok := resourceItem(s.snap.Load(), req.Params.URI)
		if !ok || !s.Disclosure().Serves(s.discRequest(ctx), it) {
			return nil, s.noResource(req.Params.URI)
		}
		params, token := buildParams(map[string]any{"uri": req.Params.URI}, "", nil, req.Params.Meta)
		raw, err := s.callSource(ctx, it, string(mcp.MethodResourcesRead), req.Params.URI, params, req.Params.Meta, req.Params.MultiRoundTripParams, token)
		deliveryFrom(ctx).wait(ctx, notificationWait)
		if err != nil {
			return nil, s.passErrors(err)
		}
		if !json.Valid(raw) {
			return nil, fmt.Errorf("resource %s: the result is not JSON", req.Params.URI)
		}
		// The stand-in carries its marker as its URI.
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: s.raw.put(raw)}}, nil
	}
}

// buildParams assembles a request's params for the source: base members,
// an optional raw member, and the client's _meta less what belongs to the
// client-gateway hop: the progress token (returned, to answer progress
// with) and the protocol's own io.modelcontextprotocol/ keys (protocol
// version, client info and capabilities), which the executor sets for its
// own hop to the upstream.
func buildParams(base map[string]any, key string, raw json.RawMessage, meta *mcp.Meta) (json.RawMessage, mcp.ProgressToken) {
	members := make([]member, 0, len(base)+2)
	for k, v := range base {
		members = append(members, member{k, encode(v)})
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	if key != "" && hasValue(raw) {
		members = append(members, member{key, raw})
	}
	var token mcp.ProgressToken
	if meta != nil {
		token = meta.ProgressToken
		fwd := make(map[string]any, len(meta.AdditionalFields))
		for k, v := range meta.AdditionalFields {
			if !hopMeta(k) {
				fwd[k] = v
			}
		}
		if len(fwd) > 0 {
			members = append(members, member{"_meta", encode(fwd)})
		}
	}
	return insertMembers([]byte("{}"), members), token
}

// hasValue reports whether a client's optional member (a call's
// arguments) holds something to forward. Some clients write an absent
// value as null (the Go SDK does for a nil map); servers whose schema says
// "an object, or absent" refuse null, so the gateway leaves it out, which
// every server reads as no arguments.
func hasValue(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// encode is json.Marshal without HTML escaping: what a client wrote as
// "<" reaches the source as "<".
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// completer forwards completion/complete to the source of the prompt or
// resource template named in the request. One the request's endpoint does
// not serve is refused as one that does not exist.
type completer struct{ s *Server }

func (c completer) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	it, ok := c.s.snap.Load().Prompt(name)
	if !ok || !c.s.Disclosure().Serves(c.s.discRequest(ctx), it) {
		return nil, c.s.passError(&sdk.RPCError{Code: sdk.CodeInvalidParams,
			Message: fmt.Sprintf("prompt '%s' not found: prompts/list names the prompts this endpoint serves", name)})
	}
	return c.complete(ctx, it, map[string]any{"type": "ref/prompt", "name": it.Original}, arg, cctx)
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	snap := c.s.snap.Load()
	var it *catalog.Item
	for _, t := range snap.ResourceTemplates() {
		if t.Name == uri {
			it = t
			break
		}
	}
	if it == nil || !c.s.Disclosure().Serves(c.s.discRequest(ctx), it) {
		return nil, c.s.passError(&sdk.RPCError{Code: sdk.CodeInvalidParams,
			Message: fmt.Sprintf("resource template '%s' not found: resources/templates/list names the templates this endpoint serves", uri)})
	}
	return c.complete(ctx, it, map[string]any{"type": "ref/resource", "uri": uri}, arg, cctx)
}

func (c completer) complete(ctx context.Context, it *catalog.Item, ref map[string]any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	p := map[string]any{"ref": ref, "argument": arg}
	if len(cctx.Arguments) > 0 {
		p["context"] = cctx
	}
	params, _ := json.Marshal(p)
	raw, err := c.s.router.Call(ctx, it, string(mcp.MethodCompletionComplete), params, c.s.newCall(ctx, nil))
	if err != nil {
		return nil, c.s.passErrors(err)
	}
	var res struct {
		Completion mcp.Completion `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("completion from %s: invalid result: %w", it.Source, err)
	}
	// mcp-go's typed Completion drops hasMore: false, total: 0 and the
	// members it does not know: the client gets the source's bytes
	// instead, put in place of this stand-in (rewrite).
	return &mcp.Completion{Values: []string{c.s.raw.put(raw)}}, nil
}
