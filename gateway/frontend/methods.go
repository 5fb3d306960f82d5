package frontend

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/skillgate/skillgate/internal/jsonscan"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Method serves a JSON-RPC method mcp-go does not know, such as an MCP
// extension's (skills/list): params is the request's params object (or
// nil), call reaches the client while it runs, and the result is the
// answer's result object. An *sdk.RPCError becomes that JSON-RPC error.
type Method func(ctx context.Context, params json.RawMessage, call sdk.Call) (json.RawMessage, error)

// requestParams returns a request body's params member (the last one, as
// encoding/json would). body has been decoded once already, so it is
// valid JSON.
func requestParams(body []byte) json.RawMessage {
	var params json.RawMessage
	jsonscan.Members(body, func(key, value []byte, _, _ int) {
		if string(key) == "params" {
			params = value
		}
	})
	return params
}

// serveMethod answers a request for one of Options.Methods over HTTP:
// notifications as SSE events, then the answer. A 2026-07-28 result gets
// the members mcp-go would add. A request of session sessID (2025-11-25 or
// older) may be cancelled (see inflightCall).
func (s *Server) serveMethod(w http.ResponseWriter, r *http.Request, m Method, sessID string, id json.RawMessage, body []byte, modern bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	fc := &fastCall{s: s, w: w, ctx: ctx}
	var call *inflightCall
	if sessID != "" {
		call = s.track(&fc.inflight, sessID, id, cancel, cancel)
		defer s.untrack(call)
	}
	raw, err := m(ctx, requestParams(body), fc)
	if call.wasCancelled() {
		fc.abandon()
		return
	}
	if err == nil && modern {
		raw = s.modernResult(raw)
	}
	fc.finish(answer(id, raw, err))
}

// ProfileOf returns the profile of the endpoint a request came in on,
// from the context of a Method, a tool handler or a call an executor
// serves in process: "" for the default endpoint.
func ProfileOf(ctx context.Context) string {
	p, _ := ctx.Value(profileKey{}).(string)
	return p
}
