package frontend

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A session is what the front end knows of a 2025-11-25-or-older session
// mcp-go issued.
type session struct {
	id string
	// drained is the count of notifications to all sessions that mcp-go
	// has delivered to this one (see Server.notified).
	drained atomic.Uint64
	// caps are the capabilities for server-to-client requests the client
	// declared in initialize (capSampling, ...).
	caps clientCaps
	use  sessionUse // for expiry (expiry.go)
	// owner is the fingerprint of the bearer token that initialized the
	// session: only requests with that token may use it (owner.go).
	owner [sha256.Size]byte
}

// clientCaps is a set of client capabilities that server-to-client
// requests need.
type clientCaps uint8

const (
	capSampling clientCaps = 1 << iota
	capElicitation
	capRoots
)

// capabilityOf maps each server-to-client request the gateway forwards to
// the client capability it needs and that capability's name.
var capabilityOf = map[string]struct {
	cap  clientCaps
	name string
}{
	string(mcp.MethodSamplingCreateMessage): {capSampling, "sampling"},
	string(mcp.MethodElicitationCreate):     {capElicitation, "elicitation"},
	string(mcp.MethodListRoots):             {capRoots, "roots"},
}

// serveFastCall answers a tools/call of a drained legacy session without
// mcp-go: the arguments go to the source as the client wrote them,
// progress and log notifications are written as SSE events of this
// answer, server-to-client requests (sampling, elicitation, roots) too,
// with the client's answers taken from its POSTs (see answerFast), and the
// result is the source's bytes. Anything else (a task, an
// unknown tool) is left to mcp-go: it reports false.
//
// sess is the legacy session, whose notifications/cancelled can cancel
// the call; nil for a 2026-07-28 request, which has none (the client
// cancels by closing the request) and whose result gets the members
// mcp-go adds in that revision.
func (s *Server) serveFastCall(w http.ResponseWriter, r *http.Request, sess *session, req *request, dreq disclosure.Request) bool {
	sessID := ""
	if sess != nil {
		sessID = sess.id
	}
	if len(req.ID) == 0 || len(req.Params.Task) > 0 {
		return false
	}
	snap := s.snap.Load()
	meta := disclosure.IsMeta(req.Params.Name)
	it, ok := snap.Tool(req.Params.Name)
	if !meta && (!ok || !s.Disclosure().Serves(dreq, it)) {
		if why := s.Disclosure().ToolRefusal(snap, dreq, req.Params.Name); why != "" {
			unknownTool(w, req.ID, why, sess == nil)
			return true
		}
		return false
	}
	if sessID == "" && !meta && (*s.headerBound.Load())[it.Name] {
		return false // mcp-go checks the headers its parameters bind
	}
	token, metaArg, ok := splitMeta(req.Params.Meta)
	if !ok {
		return false
	}
	if sess == nil && hasValue(req.Params.RequestState) {
		s.resumeRoundTrip(w, r, req, token)
		return true
	}
	plan := fastPlan{snap: snap, dreq: dreq, it: it, meta: meta, name: req.Params.Name, args: req.Params.Arguments}
	if !meta {
		members := []member{{"name", jsonscan.AppendString(nil, it.Original)}}
		if hasValue(req.Params.Arguments) {
			members = append(members, member{"arguments", req.Params.Arguments})
		}
		if len(metaArg) > 0 {
			members = append(members, member{"_meta", metaArg})
		}
		plan.params = insertMembers([]byte("{}"), members)
	}
	if sess == nil {
		if caps := modernCaps(req.Params.Meta); caps != 0 {
			// It may ask its client for input: see roundtrip.go.
			s.startRoundTrip(w, r, req, token, caps, &plan)
			return true
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	fc := &fastCall{s: s, w: w, token: token, ctx: ctx, sess: sess, gate: levelGate{sessID: sessID}}
	if sess == nil {
		fc.gate = modernGate(req.Params.Meta)
	}
	var call *inflightCall
	if sessID != "" {
		call = s.track(&fc.inflight, sessID, req.ID, cancel, cancel)
		defer s.untrack(call)
	}
	raw, err := s.runPlan(ctx, &plan, fc)
	if call.wasCancelled() {
		fc.abandon()
		return true
	}
	if err == nil && sessID == "" {
		raw = s.modernResult(raw)
	} else if err == nil {
		raw = legacyResult(raw)
	}
	fc.finish(answer(req.ID, raw, err))
	return true
}

// inflightCall is a request of a 2025-11-25 (or older) session in
// progress. The client may cancel it (notifications/cancelled): it is
// then sent no response, as the protocol asks of the receiver of a
// cancellation; its POST ends as an SSE stream without one.
type inflightCall struct {
	key string // in Server.inflight: session id + "\x00" + request id
	// cancel ends the request's work; nil when mcp-go runs the request
	// (it cancels its handler itself).
	cancel context.CancelFunc
	// end ends the request's work when its session ends (DELETE,
	// expiry): cancel, or for a request mcp-go runs the context of its
	// handler.
	end       context.CancelFunc
	cancelled atomic.Bool
}

// wasCancelled reports whether the client cancelled c; false for nil.
func (c *inflightCall) wasCancelled() bool { return c != nil && c.cancelled.Load() }

// track registers request id of session sessID as in flight, as c (nil
// for a new one), cancelled with cancel and ended with end (see
// inflightCall), until untrack.
func (s *Server) track(c *inflightCall, sessID string, id json.RawMessage, cancel, end context.CancelFunc) *inflightCall {
	if c == nil {
		c = new(inflightCall)
	}
	c.key, c.cancel, c.end = sessID+"\x00"+string(id), cancel, end
	s.inflight.Store(c.key, c)
	return c
}

// endSessionCalls cancels the requests session id has in flight, as its
// client's notifications/cancelled would (the sources are told; no
// response is written): the session ended, and no one is left to answer.
func (s *Server) endSessionCalls(id string) {
	prefix := id + "\x00"
	s.inflight.Range(func(k, v any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			c := v.(*inflightCall)
			c.cancelled.Store(true)
			if c.end != nil {
				c.end()
			}
		}
		return true
	})
}

// untrack is track's end.
func (s *Server) untrack(c *inflightCall) { s.inflight.CompareAndDelete(c.key, c) }

// fastPlan is a fast-path tools/call, ready to run.
type fastPlan struct {
	snap   *catalog.Snapshot
	dreq   disclosure.Request
	it     *catalog.Item
	meta   bool            // a meta-tool: it runs in the disclosure layer
	name   string          // the name the client called
	args   json.RawMessage // its arguments, for a meta-tool
	params json.RawMessage // the source's tools/call params, for any other
}

// runPlan runs p with call as the call's link to its client.
func (s *Server) runPlan(ctx context.Context, p *fastPlan, call sdk.Call) (json.RawMessage, error) {
	if p.meta {
		return s.Disclosure().CallMeta(ctx, p.snap, p.dreq, p.name, p.args, s.invoke, call)
	}
	raw, err := s.router.Call(ctx, p.it, string(mcp.MethodToolsCall), p.params, call)
	if err == nil && !json.Valid(raw) {
		err = fmt.Errorf("tool %s returned a result that is not JSON", p.it.Name)
	}
	return raw, err
}

// answer is the JSON-RPC response to request id: raw as its result, or err.
func answer(id json.RawMessage, raw json.RawMessage, err error) []byte {
	if err != nil {
		var rpcErr *sdk.RPCError
		if !errors.As(err, &rpcErr) {
			rpcErr = &sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()}
		}
		e, _ := json.Marshal(rpcErr)
		return rpcEnvelope(id, `,"error":`, e)
	}
	return rpcEnvelope(id, `,"result":`, raw)
}

// rpcEnvelope is {"jsonrpc":"2.0","id":ID<member>VALUE}, in one allocation
// with room for the newline finish may add.
// unknownTool refuses a call of a tool the endpoint does not serve, as
// mcp-go does (invalid params; HTTP 400 in 2026-07-28), with why
// (Disclosure.ToolRefusal).
func unknownTool(w http.ResponseWriter, id json.RawMessage, why string, modern bool) {
	e, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{sdk.CodeInvalidParams, why})
	w.Header().Set("Content-Type", "application/json")
	if modern {
		w.WriteHeader(http.StatusBadRequest)
	}
	_, _ = w.Write(append(rpcEnvelope(id, `,"error":`, e), '\n'))
}

func rpcEnvelope(id json.RawMessage, member string, value []byte) []byte {
	const head = `{"jsonrpc":"2.0","id":`
	out := make([]byte, 0, len(head)+len(id)+len(member)+len(value)+2)
	out = append(append(append(append(out, head...), id...), member...), value...)
	return append(out, '}')
}

// splitMeta takes the client's progress token out of a request's _meta and
// drops the members that are not the client's to forward (see hopMeta).
// The others go on as they are, in their order; a key given twice counts
// once, with its last value, as a decoder would read it. ok is false when
// _meta is not an object.
func splitMeta(raw json.RawMessage) (token json.RawMessage, meta []byte, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, true
	}
	var kept []member
	ok = jsonscan.Members(raw, func(key, value []byte, _, _ int) {
		switch {
		case string(key) == "progressToken":
			token = value
		case hopMetaKey(key):
		default:
			for i := range kept {
				if kept[i].key == string(key) {
					kept = slices.Delete(kept, i, i+1)
					break
				}
			}
			kept = append(kept, member{string(key), value})
		}
	})
	if !ok {
		return nil, nil, false
	}
	if len(kept) == 0 {
		return token, nil, true
	}
	return token, insertMembers([]byte("{}"), kept), true
}

// fastCall is the sdk.Call of a fast-path call: it writes notifications
// and server-to-client requests as SSE events on the call's own answer.
type fastCall struct {
	s     *Server
	w     http.ResponseWriter
	token json.RawMessage
	ctx   context.Context
	sess  *session // nil: no legacy session (2026-07-28, extension methods)
	// gate decides which log messages reach the client (loglevel.go);
	// the zero gate passes all.
	gate levelGate
	// inflight is the call as Server.inflight holds it, for a legacy
	// session's (it is allocated with the fastCall).
	inflight inflightCall

	mu   sync.Mutex
	sse  bool
	done bool
}

var _ sdk.Call = (*fastCall)(nil)

func (fc *fastCall) event(msg []byte) error {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.done {
		return nil
	}
	if !fc.sse {
		h := fc.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		fc.w.WriteHeader(http.StatusOK)
		fc.sse = true
	}
	if _, err := fmt.Fprintf(fc.w, "event: message\ndata: %s\n\n", msg); err != nil {
		return err
	}
	if f, ok := fc.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// abandon ends the answer without a response (the client cancelled the
// request): an answer not yet begun is an SSE stream without events, as
// a POST that carried a request is answered with JSON or SSE. Nothing is
// written after it.
func (fc *fastCall) abandon() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.done = true
	if !fc.sse {
		endWithoutResponse(fc.w)
		return
	}
	if f, ok := fc.w.(http.Flusher); ok {
		f.Flush()
	}
}

// endWithoutResponse answers a POST whose request was cancelled before its
// answer began: an SSE stream that ends without events.
func endWithoutResponse(w http.ResponseWriter) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish writes the answer: as the last SSE event when notifications went
// out, else as plain JSON. Nothing is written after it.
func (fc *fastCall) finish(msg []byte) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.done = true
	if fc.sse {
		_, _ = fmt.Fprintf(fc.w, "event: message\ndata: %s\n\n", msg)
		if f, ok := fc.w.(http.Flusher); ok {
			f.Flush()
		}
		return
	}
	msg = append(msg, '\n')
	fc.w.Header().Set("Content-Type", "application/json")
	fc.w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	fc.w.WriteHeader(http.StatusOK)
	_, _ = fc.w.Write(msg)
}

// Progress implements sdk.Call.
func (fc *fastCall) Progress(p sdk.Progress) error {
	if len(fc.token) == 0 {
		return nil
	}
	members := []member{{"progressToken", fc.token}, {"progress", encode(p.Progress)}}
	if p.Total > 0 {
		members = append(members, member{"total", encode(p.Total)})
	}
	if p.Message != "" {
		members = append(members, member{"message", encode(p.Message)})
	}
	return fc.event(notification(string(mcp.MethodNotificationProgress), insertMembers([]byte("{}"), members)))
}

// Notify implements sdk.Call. A log message goes out only at a level the
// client asked for (see loglevel.go).
func (fc *fastCall) Notify(n sdk.Notification) error {
	if !fc.s.passes(fc.gate, n.Method, n.Params) {
		return nil
	}
	return fc.event(notification(n.Method, n.Params))
}

func notification(method string, params []byte) []byte {
	out := append([]byte(`{"jsonrpc":"2.0","method":`), encode(method)...)
	if len(params) > 0 {
		out = append(append(out, `,"params":`...), params...)
	}
	return append(out, '}')
}

// Request implements sdk.Call: a server-to-client request goes to the
// client as an SSE event of the call's answer, with an id of the
// gateway's, and the client's answer comes back on a POST of its own. A
// client that did not declare the capability the request needs is not
// asked (roots/list is then answered with no roots).
func (fc *fastCall) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c, ok := capabilityOf[method]
	if !ok {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "the gateway does not forward " + method + " to clients"}
	}
	if fc.sess == nil || fc.sess.caps&c.cap == 0 {
		if method == string(mcp.MethodListRoots) {
			return json.RawMessage(`{"roots":[]}`), nil
		}
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound,
			Message: "the client did not declare the " + c.name + " capability that " + method + " needs"}
	}
	rctx, cancel := mergeCancel(fc.ctx, ctx)
	defer cancel()
	id := `"skillgate-` + strconv.FormatUint(fc.s.requestSeq.Add(1), 36) + `"`
	answered := make(chan []byte, 1)
	key := fc.sess.id + "\x00" + id
	fc.s.pending.Store(key, answered)
	defer fc.s.pending.Delete(key)
	msg := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":`...)
	msg = append(msg, encode(method)...)
	if len(params) > 0 {
		msg = append(append(msg, `,"params":`...), params...)
	}
	msg = append(msg, '}')
	if err := fc.event(msg); err != nil {
		return nil, fmt.Errorf("%s: writing the request to the client: %w", method, err)
	}
	select {
	case body := <-answered:
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *sdk.RPCError   `json:"error"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: fmt.Sprintf("%s: the client's answer does not decode: %v", method, err)}
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		if len(resp.Result) == 0 || string(resp.Result) == "null" {
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: method + ": the client answered with neither result nor error"}
		}
		return resp.Result, nil
	case <-rctx.Done():
		return nil, rctx.Err()
	}
}

// answerFast hands a client's answer (a JSON-RPC response in body, with
// id) to the fast-path call that asked for it; it reports whether one did.
// Answers to mcp-go's own requests are left to mcp-go.
func (s *Server) answerFast(sessID string, id json.RawMessage, body []byte) bool {
	v, ok := s.pending.LoadAndDelete(sessID + "\x00" + string(bytes.TrimSpace(id)))
	if !ok {
		return false
	}
	v.(chan []byte) <- body // buffered: one answer per id
	return true
}

// CallTool implements sdk.Call.
func (fc *fastCall) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return fc.s.newCall(fc.ctx, nil).CallTool(ctx, name, args)
}

// cancelFast marks the request of session id that a notifications/cancelled
// body names as cancelled (see inflightCall) and cancels it, when the front
// end runs it; it reports whether it did, and so whether mcp-go needs not
// see the notification.
func (s *Server) cancelFast(id string, body []byte) bool {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &n) != nil || len(n.Params.RequestID) == 0 {
		return false
	}
	v, ok := s.inflight.Load(id + "\x00" + string(n.Params.RequestID))
	if !ok {
		return false
	}
	c := v.(*inflightCall)
	c.cancelled.Store(true)
	if c.cancel == nil {
		return false
	}
	c.cancel()
	return true
}

// declaredCaps returns the capabilities for server-to-client requests an
// initialize request's client declared. A body that does not decode counts
// as declaring all of them (its requests are then left to mcp-go's checks).
func declaredCaps(body []byte) clientCaps {
	var req struct {
		Params struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return capSampling | capElicitation | capRoots
	}
	var caps clientCaps
	for name, v := range req.Params.Capabilities {
		if string(v) != "null" {
			caps |= capNamed(name)
		}
	}
	return caps
}

// hopMeta reports whether a _meta member of a client's request stays at the
// gateway: the protocol's own io.modelcontextprotocol/ members belong to
// the client-gateway hop, and skillgate.dev/ members are the gateway's to
// set (a client must not inject, say, a script's service variables).
func hopMeta(key string) bool {
	return strings.HasPrefix(key, "io.modelcontextprotocol/") || strings.HasPrefix(key, "skillgate.dev/")
}

// hopMetaKey is hopMeta for a key still in the request's bytes; it does
// not allocate (a string conversion of a key this long would).
func hopMetaKey(key []byte) bool {
	return bytes.HasPrefix(key, []byte("io.modelcontextprotocol/")) || bytes.HasPrefix(key, []byte("skillgate.dev/"))
}
