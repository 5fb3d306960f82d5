package frontend

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Log messages a source sends during a call (notifications/message while
// its tool runs) reach the call's client at the level that client asked
// for, as those it sends outside calls do (deliverLog):
//
//   - a 2026-07-28 request asks per request, with _meta's
//     io.modelcontextprotocol/logLevel, and gets none without it (the
//     revision says a server MUST NOT send log messages for a request that
//     did not ask);
//   - a legacy session (the stdio client's too) asks with logging/setLevel,
//     which then applies until it sends another; one that never sent it
//     gets every log message of its calls, as before it asked.

// levelGate is what decides which log messages of a call reach its client.
type levelGate struct {
	modern bool
	level  mcp.LoggingLevel // a 2026-07-28 request's _meta logLevel
	sessID string           // a legacy session's id
}

// gateOf returns the gate of the request a handler's ctx belongs to.
func gateOf(ctx context.Context) levelGate {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return levelGate{modern: true, level: info.LogLevel}
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return levelGate{sessID: cs.SessionID()}
	}
	return levelGate{}
}

// modernGate returns the gate of a 2026-07-28 request whose _meta is meta.
func modernGate(meta json.RawMessage) levelGate {
	var m struct {
		Level mcp.LoggingLevel `json:"io.modelcontextprotocol/logLevel"`
	}
	_ = json.Unmarshal(meta, &m)
	return levelGate{modern: true, level: m.Level}
}

// passes reports whether a notification (method, params) may reach the
// client: anything but a log message does.
func (s *Server) passes(g levelGate, method string, params []byte) bool {
	if method != string(mcp.MethodNotificationMessage) {
		return true
	}
	var p struct {
		Level mcp.LoggingLevel `json:"level"`
	}
	_ = json.Unmarshal(params, &p)
	switch {
	case g.modern:
		return g.level != "" && p.Level.ShouldSendTo(g.level)
	case g.sessID == "":
		return true
	}
	if _, set := s.levelSet.Load(g.sessID); !set {
		return true
	}
	v, ok := s.clients.Load(g.sessID)
	if !ok {
		return true
	}
	sl, ok := v.(server.SessionWithLogging)
	return !ok || p.Level.ShouldSendTo(sl.GetLogLevel())
}

// noteSetLevel is mcp-go's hook after a legacy session's logging/setLevel
// succeeded: that session's level applies to its calls' log messages from
// now on.
func (s *Server) noteSetLevel(ctx context.Context, _ any, _ *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
	if server.IsModernRequest(ctx) {
		return
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		s.levelSet.Store(cs.SessionID(), true)
	}
}
