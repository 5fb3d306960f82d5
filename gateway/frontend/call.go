package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// clientCall is the front end's side of one request: it carries what a
// source sends during the call back to the client that made it.
type clientCall struct {
	s *Server
	// ctx is the client request's context; it identifies the session.
	ctx   context.Context
	token mcp.ProgressToken
}

var _ sdk.Call = (*clientCall)(nil)

func (s *Server) newCall(ctx context.Context, token mcp.ProgressToken) *clientCall {
	return &clientCall{s: s, ctx: ctx, token: token}
}

// Progress implements sdk.Call: the source's progress is sent under the
// client's own progress token.
func (c *clientCall) Progress(p sdk.Progress) error {
	if c.token == nil {
		return nil
	}
	params := map[string]any{"progressToken": c.token, "progress": p.Progress}
	if p.Total > 0 {
		params["total"] = p.Total
	}
	if p.Message != "" {
		params["message"] = p.Message
	}
	return c.notify(string(mcp.MethodNotificationProgress), params)
}

// notify sends a notification to the call's client and counts it, so the
// result waits until it is written.
func (c *clientCall) notify(method string, params map[string]any) error {
	if ow, ok := c.ctx.Value(stdioOutKey{}).(*outWriter); ok {
		// Written at once, before the handler's result: mcp-go would queue
		// it for a goroutine of its own, to go out after the result.
		var raw []byte
		if params != nil {
			raw = encode(params)
		}
		return ow.writeLine(notification(method, raw))
	}
	if err := c.s.mcp.SendNotificationToClient(c.ctx, method, params); err != nil {
		return err
	}
	deliveryFrom(c.ctx).noteSent()
	return nil
}

// Notify implements sdk.Call. A log message goes out only at a level the
// client asked for (see loglevel.go).
func (c *clientCall) Notify(n sdk.Notification) error {
	if !c.s.passes(gateOf(c.ctx), n.Method, n.Params) {
		return nil
	}
	var params map[string]any
	if len(n.Params) > 0 {
		if err := json.Unmarshal(n.Params, &params); err != nil {
			return fmt.Errorf("notification %s: params are not an object: %w", n.Method, err)
		}
	}
	return c.notify(n.Method, params)
}

// Request implements sdk.Call: a source's server-to-client request goes to
// the client whose call caused it.
func (c *clientCall) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if need, ok := capabilityOf[method]; ok {
		if caps, known := c.s.callerCaps(c.ctx); known && caps&need.cap == 0 {
			if method == string(mcp.MethodListRoots) {
				return json.RawMessage(`{"roots":[]}`), nil
			}
			return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound,
				Message: "the client did not declare the " + need.name + " capability that " + method + " needs"}
		}
	}
	rctx, cancel := mergeCancel(c.ctx, ctx)
	defer cancel()
	var (
		res any
		err error
	)
	switch method {
	case string(mcp.MethodSamplingCreateMessage):
		var req mcp.CreateMessageRequest
		if err := json.Unmarshal(params, &req.CreateMessageParams); err != nil {
			return nil, invalidParams(method, err)
		}
		req.Method = method
		//lint:ignore SA1019 sampling is deprecated from 2026-07-28 on, but sessions of 2025-11-25 and older, which this path serves, still use it
		res, err = c.s.mcp.RequestSampling(rctx, req)
	case string(mcp.MethodElicitationCreate):
		var req mcp.ElicitationRequest
		if err := json.Unmarshal(params, &req.Params); err != nil {
			return nil, invalidParams(method, err)
		}
		req.Method = method
		res, err = c.s.mcp.RequestElicitation(rctx, req)
	case string(mcp.MethodListRoots):
		var req mcp.ListRootsRequest
		req.Method = method
		res, err = c.s.mcp.RequestRoots(rctx, req)
	default:
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "the gateway does not forward " + method + " to clients"}
	}
	if err != nil {
		var rpcErr *sdk.RPCError
		if errors.As(err, &rpcErr) {
			return nil, err
		}
		return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: fmt.Sprintf("%s: %v", method, err)}
	}
	return json.Marshal(res)
}

// callerCaps returns the capabilities for server-to-client requests that
// the client of ctx's request declared; known is false when the front end
// cannot tell (mcp-go then asks the client as it is). A 2026-07-28
// request that declared any reaches its client as a round trip
// (roundtrip.go), so one that comes here declared none.
func (s *Server) callerCaps(ctx context.Context) (caps clientCaps, known bool) {
	if server.IsModernRequest(ctx) {
		return 0, true
	}
	id, _ := ctx.Value(clientKey{}).(string)
	if id == stdioSession {
		return clientCaps(s.stdioCaps.Load()), true
	}
	if v, ok := s.sessions.Load(id); ok && id != "" {
		return v.(*session).caps, true
	}
	return 0, false
}

// CallTool implements sdk.Call: a source calls another tool of the catalog.
func (c *clientCall) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	it, ok := c.s.snap.Load().Tool(name)
	if !ok {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%v: %s", ErrUnknownTool, name)}
	}
	rctx, cancel := mergeCancel(c.ctx, ctx)
	defer cancel()
	params, _ := buildParams(map[string]any{"name": it.Original}, "arguments", args, nil)
	return c.s.router.Call(rctx, it, string(mcp.MethodToolsCall), params, c.s.newCall(c.ctx, nil))
}

func invalidParams(method string, err error) error {
	return &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%s: invalid params: %v", method, err)}
}

// mergeCancel returns a context with base's values that ends when either
// base or other ends.
func mergeCancel(base, other context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(other, cancel)
	return ctx, func() { stop(); cancel() }
}
