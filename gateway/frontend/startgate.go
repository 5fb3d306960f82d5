package frontend

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// answeredWhileStarting are the requests served at once while the gateway
// starts (Options.Serving is open): they read nothing of the catalog, so
// a client's handshake does not wait for a slow server. Every other
// request (tools/list, tools/call, resources/..., an extension method)
// waits, so that what it reads holds every source's first try.
var answeredWhileStarting = map[string]bool{
	string(mcp.MethodInitialize):     true,
	string(mcp.MethodPing):           true,
	string(mcp.MethodSetLogLevel):    true,
	string(mcp.MethodServerDiscover): true,
}

// awaitServing holds a request for method until the front end serves the
// catalog (Options.Serving is closed), ctx ends or gone (nil for never) is
// closed. It reports whether the request is to be served. Notifications
// and a client's answers (method "") never wait.
func (s *Server) awaitServing(ctx context.Context, method string, gone <-chan struct{}) bool {
	if s.serving() || method == "" || answeredWhileStarting[method] {
		return true
	}
	select {
	case <-s.opts.Serving:
		return true
	case <-ctx.Done():
		return false
	case <-gone:
		return false
	}
}

// holdWhileStarting is the mcp-go hook that holds the requests mcp-go
// serves (awaitServing); an error answers the request, whose client
// cancelled it or went away.
func (s *Server) holdWhileStarting(ctx context.Context, _ any, message any) error {
	if s.serving() {
		return nil
	}
	raw, ok := message.(json.RawMessage)
	var req struct {
		Method string `json:"method"`
	}
	if !ok || json.Unmarshal(raw, &req) != nil {
		return nil // mcp-go says what is wrong with it
	}
	if !s.awaitServing(ctx, req.Method, nil) {
		return context.Cause(ctx)
	}
	return nil
}

// serving reports whether the catalog is served (Options.Serving).
func (s *Server) serving() bool {
	if s.opts.Serving == nil {
		return true
	}
	select {
	case <-s.opts.Serving:
		return true
	default:
		return false
	}
}
