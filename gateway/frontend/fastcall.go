package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A session is what the front end knows of a 2025-11-25-or-older session
// mcp-go issued.
type session struct {
	id string
	// drained is the count of notifications to all sessions that mcp-go
	// has delivered to this one (see Server.notified).
	drained atomic.Uint64
	// plain: the client declared none of sampling, elicitation or roots, so
	// no server-to-client request can be made on its behalf.
	plain bool
}

// serveFastCall answers a tools/call of a plain, drained legacy session
// without mcp-go: the arguments go to the source as the client wrote them,
// progress and log notifications are written as SSE events of this
// answer, and the result is the source's bytes. Anything else (a task, an
// unknown tool) is left to mcp-go: it reports false.
//
// sessID is the legacy session, whose notifications/cancelled can cancel
// the call; "" for a 2026-07-28 request, which has none (the client
// cancels by closing the request) and whose result gets the members
// mcp-go adds in that revision.
func (s *Server) serveFastCall(w http.ResponseWriter, r *http.Request, sessID string, req *request, dreq disclosure.Request) bool {
	if len(req.ID) == 0 || len(req.Params.Task) > 0 {
		return false
	}
	snap := s.snap.Load()
	meta := disclosure.IsMeta(req.Params.Name)
	it, ok := snap.Tool(req.Params.Name)
	if !meta && (!ok || !s.Disclosure().Serves(dreq, it)) {
		return false
	}
	if sessID == "" && !meta && bytes.Contains(it.Raw, []byte("x-mcp-header")) {
		return false // mcp-go checks the headers its parameters bind
	}
	token, metaArg, ok := splitMeta(req.Params.Meta)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if sessID != "" {
		key := sessID + "\x00" + string(req.ID)
		s.inflight.Store(key, cancel)
		defer s.inflight.Delete(key)
	}
	fc := &fastCall{s: s, w: w, token: token, ctx: ctx}
	finish := func(raw json.RawMessage, err error) {
		if err == nil && sessID == "" {
			raw = s.modernResult(raw)
		}
		fc.finish(answer(req.ID, raw, err))
	}
	if meta {
		raw, err := s.Disclosure().CallMeta(ctx, snap, dreq, req.Params.Name, req.Params.Arguments, s.invoke, fc)
		finish(raw, err)
		return true
	}
	fwdMeta := metaArg
	members := []member{{"name", encode(it.Original)}}
	if len(req.Params.Arguments) > 0 {
		members = append(members, member{"arguments", req.Params.Arguments})
	}
	if len(fwdMeta) > 0 {
		members = append(members, member{"_meta", fwdMeta})
	}
	params := insertMembers([]byte("{}"), members)
	raw, err := s.router.Call(ctx, it, string(mcp.MethodToolsCall), params, fc)
	if err == nil && !json.Valid(raw) {
		err = fmt.Errorf("tool %s returned a result that is not JSON", it.Name)
	}
	finish(raw, err)
	return true
}

// answer is the JSON-RPC response to request id: raw as its result, or err.
func answer(id json.RawMessage, raw json.RawMessage, err error) []byte {
	if err != nil {
		var rpcErr *sdk.RPCError
		if !errors.As(err, &rpcErr) {
			rpcErr = &sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()}
		}
		e, _ := json.Marshal(rpcErr)
		return append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"error":`...), e...), '}')
	}
	return append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":`...), raw...), '}')
}

// splitMeta takes the client's progress token out of a request's _meta and
// drops the members that are not the client's to forward (see hopMeta).
func splitMeta(raw json.RawMessage) (token json.RawMessage, meta []byte, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, nil, false
	}
	token = m["progressToken"]
	delete(m, "progressToken")
	for k := range m {
		if hopMeta(k) {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return token, nil, true
	}
	return token, insertMembers([]byte("{}"), sortedMembers(m)), true
}

// fastCall is the sdk.Call of a fast-path call: it writes notifications as
// SSE events on the call's own answer.
type fastCall struct {
	s     *Server
	w     http.ResponseWriter
	token json.RawMessage
	ctx   context.Context

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

// Notify implements sdk.Call.
func (fc *fastCall) Notify(n sdk.Notification) error {
	return fc.event(notification(n.Method, n.Params))
}

func notification(method string, params []byte) []byte {
	out := append([]byte(`{"jsonrpc":"2.0","method":`), encode(method)...)
	if len(params) > 0 {
		out = append(append(out, `,"params":`...), params...)
	}
	return append(out, '}')
}

// Request implements sdk.Call: the fast path serves only clients that
// declared no capability a server-to-client request needs.
func (fc *fastCall) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	if method == string(mcp.MethodListRoots) {
		return json.RawMessage(`{"roots":[]}`), nil
	}
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "the client did not declare the capability " + method + " needs"}
}

// CallTool implements sdk.Call.
func (fc *fastCall) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return fc.s.newCall(fc.ctx, nil).CallTool(ctx, name, args)
}

// cancelFast cancels a fast-path call named by a notifications/cancelled
// body of session id; it reports whether it did.
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
	v.(context.CancelFunc)()
	return true
}

// declaresServerRequests reports whether an initialize request's client
// capabilities include sampling, elicitation or roots.
func declaresServerRequests(body []byte) bool {
	var req struct {
		Params struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return true
	}
	for _, k := range []string{"sampling", "elicitation", "roots"} {
		if v, ok := req.Params.Capabilities[k]; ok && string(v) != "null" {
			return true
		}
	}
	return false
}

// hopMeta reports whether a _meta member of a client's request stays at the
// gateway: the protocol's own io.modelcontextprotocol/ members belong to
// the client-gateway hop, and skillgate.dev/ members are the gateway's to
// set (a client must not inject, say, a script's service variables).
func hopMeta(key string) bool {
	return strings.HasPrefix(key, "io.modelcontextprotocol/") || strings.HasPrefix(key, "skillgate.dev/")
}
