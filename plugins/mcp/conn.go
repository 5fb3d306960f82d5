package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// clientCapabilities is what skillgate declares to upstreams: it forwards
// sampling, elicitation and roots requests to the client of the call that
// caused them.
var clientCapabilities = json.RawMessage(`{"elicitation":{},"roots":{},"sampling":{}}`)

// clientInfo identifies skillgate to upstreams.
var clientInfo = json.RawMessage(`{"name":"skillgate","version":"` + version + `"}`)

const (
	// maxListPages bounds a paginated list, against an upstream that keeps
	// handing out new cursors.
	maxListPages = 1000
	// listTimeout bounds one re-list after a list_changed notification.
	listTimeout = time.Minute
	// cancelTimeout bounds sending notifications/cancelled.
	cancelTimeout = 5 * time.Second
)

// serverCaps is the part of the upstream's capabilities the executor acts on.
type serverCaps struct {
	Tools *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
	Resources *struct {
		Subscribe   bool `json:"subscribe"`
		ListChanged bool `json:"listChanged"`
	} `json:"resources"`
	Prompts *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"prompts"`
}

// kinds of definitions, as bits for re-listing.
const (
	kindTools = 1 << iota
	kindResources
	kindTemplates
	kindPrompts
	kindAll = kindTools | kindResources | kindTemplates | kindPrompts
)

// conn is one MCP session with an upstream over a wire: the handshake, the
// definitions, the calls in flight and the routing of what the upstream
// sends back to them.
type conn struct {
	src *source
	log *slog.Logger
	w   wire

	modern  bool            // speaking 2026-07-28 or later
	version string          // the negotiated protocol version
	server  json.RawMessage // the initialize result
	caps    serverCaps
	meta    []field // per-request _meta members of the modern era
	headerT map[string]*mcpgo.Tool

	ctx    context.Context // ends when the conn is closed
	cancel context.CancelFunc
	bgMu   sync.Mutex     // orders spawn against close
	wg     sync.WaitGroup // background goroutines

	nextID    atomic.Int64
	nextToken atomic.Int64

	mu      sync.Mutex
	byToken map[string]*inflight
	// taskRequired names the tools that can only be called as tasks;
	// tasks holds the tasks running for calls, by id (tasks.go).
	taskRequired map[string]bool
	tasks        map[string]*taskCall
	active       []*inflight // in the order they started
	relist       int         // kinds waiting to be re-listed
	kick         chan struct{}

	listen listenState

	noCall    limiter // logs of notifications that have no call to go to
	ambiguous limiter // logs of what several clients' calls could own
}

// inflight is one call forwarded to the upstream.
type inflight struct {
	ctx    context.Context
	call   sdk.Call
	client string // sdk.CallRequest.Client: "" is a client of its own
	token  string
	ev     *eventQueue // &evq when the call has a client
	evq    eventQueue
}

type inflightKey struct{}

func newConn(src *source) *conn {
	c := &conn{
		src: src, log: src.log,
		byToken:   map[string]*inflight{},
		tasks:     map[string]*taskCall{},
		kick:      make(chan struct{}, 1),
		noCall:    limiter{per: 20},
		ambiguous: limiter{per: 20},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

func (c *conn) handlers() wireHandlers {
	return wireHandlers{notification: c.onNotification, request: c.onRequest}
}

// initialize performs the 2025-11-25-and-older handshake.
func (c *conn) initialize(ctx context.Context, version string) error {
	params := mustJSON(map[string]json.RawMessage{
		"protocolVersion": mustJSON(version),
		"capabilities":    clientCapabilities,
		"clientInfo":      clientInfo,
	})
	res, err := c.request(ctx, "initialize", params)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var r struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.ProtocolVersion == "" {
		return fmt.Errorf("initialize: the upstream's answer is not an initialize result: %s", truncate(string(res), 200))
	}
	if len(r.Capabilities) > 0 {
		if err := json.Unmarshal(r.Capabilities, &c.caps); err != nil {
			return fmt.Errorf("initialize: the upstream's capabilities do not decode: %w", err)
		}
	}
	c.version, c.server = r.ProtocolVersion, res
	c.w.setProtocolVersion(r.ProtocolVersion)
	if err := c.w.notify(ctx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

// definitions lists everything the upstream offers, raw.
func (c *conn) definitions(ctx context.Context, kinds int, into *sdk.Definitions) error {
	type list struct {
		kind          int
		method, field string
		dst           *[]json.RawMessage
		offered       bool
	}
	lists := []list{
		// tools/list is tried even when not declared: some servers forget.
		{kindTools, "tools/list", "tools", &into.Tools, true},
		{kindResources, "resources/list", "resources", &into.Resources, c.caps.Resources != nil},
		{kindTemplates, "resources/templates/list", "resourceTemplates", &into.ResourceTemplates, c.caps.Resources != nil},
		{kindPrompts, "prompts/list", "prompts", &into.Prompts, c.caps.Prompts != nil},
	}
	for _, l := range lists {
		if kinds&l.kind == 0 {
			continue
		}
		if !l.offered {
			*l.dst = nil
			continue
		}
		items, err := c.listAll(ctx, l.method, l.field)
		if err != nil {
			return fmt.Errorf("%s: %w", l.method, err)
		}
		if l.kind == kindTools {
			items = c.withoutTaskSupport(c.checkTools(items))
		}
		*l.dst = items
	}
	into.Server = c.server
	return nil
}

// listAll follows a paginated list to its end and returns its items exactly
// as the upstream sent them.
func (c *conn) listAll(ctx context.Context, method, key string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	seen := map[string]bool{}
	var cursor json.RawMessage
	for range maxListPages {
		params := json.RawMessage(`{}`)
		if cursor != nil {
			params = mustJSON(map[string]json.RawMessage{"cursor": cursor})
		}
		params, err := c.withProtocolMeta(params)
		if err != nil {
			return nil, err
		}
		res, err := c.request(ctx, method, params)
		if err != nil {
			var re *sdk.RPCError
			if errors.As(err, &re) && re.Code == sdk.CodeMethodNotFound {
				return out, nil
			}
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("the upstream's answer is not an object: %s", truncate(string(res), 200))
		}
		var items []json.RawMessage
		if raw := page[key]; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("%s is not a list: %w", key, err)
			}
		}
		out = append(out, items...)
		next := page["nextCursor"]
		if len(next) == 0 || string(next) == "null" || string(next) == `""` {
			return out, nil
		}
		if seen[string(next)] {
			return nil, fmt.Errorf("the upstream repeated cursor %s", truncate(string(next), 80))
		}
		seen[string(next)] = true
		cursor = next
	}
	return nil, fmt.Errorf("more than %d pages", maxListPages)
}

// request sends one request and returns its raw result. A JSON-RPC error is
// returned as the *sdk.RPCError it is. Its errors do not name the source:
// the executor's caller does (the gateway says "tool (source name)"), and
// those of the handshake and listing are wrapped in "load source".
func (c *conn) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	var header http.Header
	if c.modern {
		header = c.standardHeaders(method, params)
	}
	resp, err := c.w.roundTrip(ctx, &rpcRequest{id: id, method: method, params: params, header: header})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			c.cancelUpstream(id, method, cancelReason(ctx))
			return nil, fmt.Errorf("source %q: %s: %w", c.src.name, method, ctxErr)
		}
		if cause := c.w.cause(); cause != nil {
			e := fmt.Errorf("%w: %w", sdk.ErrUnavailable, cause)
			var unsent *unsentError
			if errors.As(err, &unsent) {
				return nil, &unsentError{err: e}
			}
			return nil, e
		}
		var re *sdk.RPCError
		if errors.As(err, &re) {
			return nil, re
		}
		return nil, err
	}
	if resp.err != nil {
		return nil, resp.err
	}
	return resp.result, nil
}

// cancelUpstream tells the upstream to stop working on a request the caller
// gave up on. Over modern HTTP, ending the request's stream is the
// cancellation; the handshake is never cancelled.
func (c *conn) cancelUpstream(id int64, method string, reason string) {
	if c.modern || method == "initialize" || method == "server/discover" || c.w.cause() != nil {
		return
	}
	params := mustJSON(map[string]any{"requestId": id, "reason": reason})
	c.spawn(func() {
		ctx, cancel := context.WithTimeout(c.ctx, cancelTimeout)
		defer cancel()
		_ = c.w.notify(ctx, "notifications/cancelled", params)
	})
}

// cancelReason is the reason to give the upstream for a request whose
// ctx ended: the context's cause when it was given one (the gateway's
// "stopping" or timeouts, or a client's own reason), else neutral words
// rather than Go's "context canceled".
func cancelReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	switch {
	case cause == nil, errors.Is(cause, context.Canceled):
		return "cancelled by the client"
	case errors.Is(cause, context.DeadlineExceeded):
		return "the request timed out"
	}
	return cause.Error()
}

// spawn runs f in the background unless the conn is closed; close waits
// for it.
func (c *conn) spawn(f func()) {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.ctx.Err() != nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// call forwards one client request and returns the upstream's result as it
// was sent. Progress and log notifications of the call go to call while it
// runs; server requests it causes are answered through call. client is the
// key of the client the call came from (sdk.CallRequest.Client).
func (c *conn) call(ctx context.Context, method string, params json.RawMessage, client string, call sdk.Call) (json.RawMessage, error) {
	if c.modern {
		switch method {
		case "ping": // removed in 2026-07-28: liveness is the transport's
			return json.RawMessage(`{}`), nil
		case "resources/subscribe", "resources/unsubscribe":
			return c.modernSubscribe(method, params)
		}
	}
	if len(params) > 0 && !json.Valid(params) {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "params are not valid JSON"}
	}
	ic := c.begin(ctx, client, call)
	defer c.end(ic)
	ctx = context.WithValue(ctx, inflightKey{}, ic)

	p := params
	if method != "ping" && ic.token != "" {
		var err error
		if p, err = withMeta(p, field{"progressToken", jsonscan.AppendString(nil, ic.token)}); err != nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
		}
	}
	var err error
	if p, err = c.withProtocolMeta(p); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	var res json.RawMessage
	if method == "tools/call" && c.needsTask(params) {
		res, err = c.callTask(ctx, ic, p)
	} else {
		res, err = c.request(ctx, method, p)
	}
	if err == nil && c.modern {
		res, err = c.roundTrips(ctx, ic, method, p, res)
	}
	if ic.ev != nil {
		ic.ev.flush(ctx)
	}
	return res, err
}

// begin registers a call as in flight.
func (c *conn) begin(ctx context.Context, client string, call sdk.Call) *inflight {
	ic := &inflight{ctx: ctx, call: call, client: client}
	if call == nil {
		return ic
	}
	var tb [24]byte
	ic.token = string(strconv.AppendInt(append(tb[:0], "sg-"...), c.nextToken.Add(1), 36))
	ic.evq = eventQueue{call: call, log: c.log}
	ic.ev = &ic.evq
	c.mu.Lock()
	c.byToken[ic.token] = ic
	c.active = append(c.active, ic)
	c.mu.Unlock()
	return ic
}

func (c *conn) end(ic *inflight) {
	if ic.token == "" {
		return
	}
	c.mu.Lock()
	delete(c.byToken, ic.token)
	for i, a := range c.active {
		if a == ic {
			c.active = append(c.active[:i], c.active[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
}

// owner picks the call that a log notification or a server request of the
// upstream belongs to when the link cannot say (stdio, and the standalone
// GET stream or legacy SSE stream of an HTTP server): the
// call that started last, provided every call in flight came from the same
// client. With calls of several clients in flight any choice could hand
// one client's sampling request, elicitation, roots question or log line
// to another, so none is chosen and ambiguous is true. A call whose
// client is unknown ("") counts as a client of its own.
func (c *conn) owner() (ic *inflight, ambiguous bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.active) - 1; i >= 0; i-- {
		a := c.active[i]
		if a.ctx.Err() != nil {
			continue
		}
		if ic == nil {
			ic = a
			continue
		}
		if a.client == "" || a.client != ic.client {
			return nil, true
		}
	}
	return ic, false
}

// noteOwner picks the call a notification belongs to. One that came on a
// call's response stream (streamable HTTP) is that call's, in 2026-07-28,
// where every request is a session of its own on the server too. Before
// it, the gateway's requests share one upstream session, and a server may
// put a notification on any open stream of the session (mcp-go's server
// does: one queue per session, drained by whichever stream reads first),
// so the stream decides only while the calls in flight are all one
// client's; otherwise owner decides.
func (c *conn) noteOwner(ctx context.Context) (ic *inflight, ambiguous bool) {
	if ctx.Value(streamKey{}) != nil {
		if ic, _ = ctx.Value(inflightKey{}).(*inflight); ic != nil && (ic.ev == nil || ic.ctx.Err() != nil) {
			ic = nil // a call with no client behind it, or one that has ended
		}
		if c.modern {
			return ic, false
		}
	}
	o, ambiguous := c.owner()
	if ic == nil || ambiguous {
		return o, ambiguous
	}
	return ic, false
}

func (c *conn) onNotification(ctx context.Context, method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		var token string
		if json.Unmarshal(p.Token, &token) != nil {
			return // not one of ours: ours are strings
		}
		c.mu.Lock()
		ic := c.byToken[token]
		c.mu.Unlock()
		if ic != nil && ic.ev != nil {
			ic.ev.push(event{progress: &sdk.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}})
		}
	case "notifications/tools/list_changed":
		c.changed(kindTools)
	case "notifications/resources/list_changed":
		c.changed(kindResources | kindTemplates)
	case "notifications/prompts/list_changed":
		c.changed(kindPrompts)
	case "notifications/resources/updated":
		c.src.notify(sdk.Notification{Method: method, Params: params})
	case "notifications/tasks/status":
		c.onTaskStatus(params)
	case "notifications/cancelled", "notifications/subscriptions/acknowledged":
		// A cancelled server request is answered anyway; acknowledgements
		// of subscriptions/listen need no action.
	default:
		// notifications/message and anything newer belong to a call.
		ic, ambiguous := c.noteOwner(ctx)
		if ic != nil {
			ic.ev.push(event{note: &sdk.Notification{Method: method, Params: params}})
			return
		}
		if ambiguous {
			logLimited(c.log, &c.ambiguous, slog.LevelInfo, "upstream notification not forwarded: calls of several clients are running and nothing ties it to one of them",
				"method", method, "params", truncate(string(params), 300))
			return
		}
		if method == "notifications/message" {
			// A log message of the upstream's own (server-everything's
			// simulated logging, a server's background work) is for every
			// client, as on a direct connection; the gateway honours each
			// client's logging/setLevel.
			c.src.notify(sdk.Notification{Method: method, Params: params})
			return
		}
		logLimited(c.log, &c.noCall, slog.LevelInfo, "upstream notification outside any call",
			"method", method, "params", truncate(string(params), 300))
	}
}

// onRequest answers a server-to-client request through the client of the
// call that caused it. Sampling, elicitation and roots requests belong to
// a client request (SEP-2260). One that came on the response stream of a
// request of the gateway's (streamable HTTP) belongs to that request. Over
// stdio and legacy SSE nothing says which call caused a request, nor on
// the standalone GET stream, where servers put requests they make while
// handling a call too (mcp-go's server sends every sampling and roots
// request there): owner guesses. A request no running client call can
// have caused is never handed to another call's client: roots/list is
// answered with the gateway's own roots (none: one upstream serves every
// client, so no client's roots are the upstream's); sampling and
// elicitation are refused with invalid params, as the spec has a client
// refuse a request that belongs to no request of its own.
func (c *conn) onRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method == "ping" {
		return json.RawMessage(`{}`), nil
	}
	ic, _ := ctx.Value(inflightKey{}).(*inflight)
	if ic != nil && (ic.call == nil || ic.ctx.Err() != nil) {
		ic = nil // a request with no client behind it, or a call that has ended
	}
	onStream := ctx.Value(streamKey{}) != nil
	if ic == nil && !onStream {
		var ambiguous bool
		if ic, ambiguous = c.owner(); ambiguous {
			logLimited(c.log, &c.ambiguous, slog.LevelWarn, "upstream request refused: calls of several clients are running and nothing ties it to one of them",
				"method", method)
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: fmt.Sprintf(
				"skillgate: source %q sent %s while calls of several clients were running; over this link nothing ties it to the call that caused it, so the gateway refuses it rather than ask the wrong client (a server reached over streamable HTTP can send such requests on the call's own stream, where this cannot happen)", c.src.name, method)}
		}
	}
	if ic == nil && method == "roots/list" {
		// Servers ask for roots right after initialization, when no client
		// is behind the gateway's connection: there are none to offer.
		return json.RawMessage(`{"roots":[]}`), nil
	}
	if ic == nil {
		why := "no call of a client's is running on it"
		if onStream {
			why = "it came on the stream of a request no running client call made"
		}
		logLimited(c.log, &c.noCall, slog.LevelInfo, "upstream request refused: no client call caused it", "method", method, "why", why)
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf(
			"skillgate: no client call is active on source %q to answer %s (%s); the gateway forwards it only to the client whose call caused it, while that call runs", c.src.name, method, why)}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ic.ctx, cancel)
	defer stop()
	res, err := ic.call.Request(ctx, method, params)
	if err != nil {
		return nil, asRPCError(err)
	}
	return res, nil
}

// changed schedules a re-list of kinds.
func (c *conn) changed(kinds int) {
	c.mu.Lock()
	c.relist |= kinds
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// relistLoop re-lists what list_changed notifications named, coalescing
// bursts, and hands the new set to the source.
func (c *conn) relistLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.kick:
		}
		c.mu.Lock()
		kinds := c.relist
		c.relist = 0
		c.mu.Unlock()
		if kinds == 0 {
			continue
		}
		defs := c.src.definitionsSnapshot()
		ctx, cancel := context.WithTimeout(c.ctx, listTimeout)
		err := c.definitions(ctx, kinds, &defs)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil {
				c.log.Warn("re-listing after list_changed failed", "err", err)
			}
			continue
		}
		c.src.setDefinitions(c, defs)
	}
}

// start runs the conn's background work once it is ready.
func (c *conn) start() {
	c.spawn(c.relistLoop)
	if c.modern {
		c.startListen()
	}
}

// close ends the session and the wire, and waits for the background work.
func (c *conn) close() {
	c.bgMu.Lock()
	c.cancel()
	c.bgMu.Unlock()
	if c.w != nil {
		_ = c.w.close()
	}
	c.wg.Wait()
}
