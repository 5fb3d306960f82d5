package frontend

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

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
// the members mcp-go would add.
func (s *Server) serveMethod(w http.ResponseWriter, r *http.Request, m Method, id json.RawMessage, body []byte, modern bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	fc := &fastCall{s: s, w: w, ctx: ctx}
	raw, err := m(ctx, requestParams(body), fc)
	if err == nil && modern {
		raw = s.modernResult(raw)
	}
	fc.finish(answer(id, raw, err))
}

// stdioCall is the sdk.Call of an extension method served over stdio:
// notifications are written between protocol lines.
type stdioCall struct {
	ow *outWriter
}

var _ sdk.Call = stdioCall{}

func (c stdioCall) Progress(sdk.Progress) error { return nil }

func (c stdioCall) Notify(n sdk.Notification) error {
	return c.ow.writeLine(notification(n.Method, n.Params))
}

func (c stdioCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "no client requests during an extension method"}
}

func (c stdioCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "no tool calls during an extension method"}
}

// stdioMethods runs extension methods for the stdio front end, each on its
// own goroutine, and waits for them when the client goes.
type stdioMethods struct {
	s   *Server
	ctx context.Context
	ow  *outWriter
	wg  sync.WaitGroup
}

func (sm *stdioMethods) serve(m Method, id, body []byte) {
	sm.wg.Add(1)
	go func() {
		defer sm.wg.Done()
		raw, err := m(sm.ctx, requestParams(body), stdioCall{sm.ow})
		_ = sm.ow.writeLine(answer(id, raw, err))
	}()
}
