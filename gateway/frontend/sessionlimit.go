package frontend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// A session of the 2025-11-25 era or older costs the gateway memory until
// it ends, in the front end and in mcp-go, which keeps what the client
// declared in initialize for the session's life. So the number of
// sessions is capped (Options.MaxSessions), a session whose client never
// came back after initialize ends soon (Options.UnconfirmedIdle, see
// expiry.go), and an initialize whose clientInfo or capabilities are
// larger than any client needs is refused.

const (
	// defaultMaxSessions is how many sessions may live at once.
	defaultMaxSessions = 10000
	// maxSessionsKey is the setting that raises it, named in the refusal.
	maxSessionsKey = "limits.max_sessions"
	// defaultUnconfirmedIdle is how long a session lives whose client sent
	// nothing in it after initialize (not even notifications/initialized).
	defaultUnconfirmedIdle = 2 * time.Minute
	// maxClientInfo and maxClientCaps bound the clientInfo and the
	// capabilities of an initialize, in bytes as sent. Real clients send a
	// few hundred bytes of each.
	maxClientInfo = 8 << 10
	maxClientCaps = 64 << 10
)

// maxSessions is the configured session cap.
func (s *Server) maxSessions() int64 {
	if s.opts.MaxSessions > 0 {
		return int64(s.opts.MaxSessions)
	}
	return defaultMaxSessions
}

// unconfirmedIdle is the configured life of a session its client never used.
func (s *Server) unconfirmedIdle() time.Duration {
	if s.opts.UnconfirmedIdle > 0 {
		return s.opts.UnconfirmedIdle
	}
	return defaultUnconfirmedIdle
}

// reserveSession takes a place for the session an initialize may start,
// reporting false when every place is taken. The place is the session's
// once sessionTracker records it; otherwise releaseSession gives it back.
func (s *Server) reserveSession(now time.Time) bool {
	limit := s.maxSessions()
	if s.nsessions.Load() >= limit {
		s.expireSessions(now) // at most once per sweep interval
	}
	if s.nsessions.Add(1) > limit {
		s.nsessions.Add(-1)
		return false
	}
	return true
}

func (s *Server) releaseSession() { s.nsessions.Add(-1) }

// forgetSession drops session id from the sessions the front end knows,
// giving back its place.
func (s *Server) forgetSession(id string) {
	if _, ok := s.sessions.LoadAndDelete(id); ok {
		s.nsessions.Add(-1)
	}
}

// tooManySessions answers an initialize refused because the gateway holds
// as many sessions as it may: 503 with Retry-After, and a JSON-RPC error
// that says what the limit is and what to do.
func (s *Server) tooManySessions(w http.ResponseWriter, id json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(fmt.Sprintf("too many sessions: the gateway serves at most %d sessions at once (%s) and all are taken; "+
		"retry later (a session unused for %v, or unused after initialize for %v, ends), end sessions you no longer use with "+
		"DELETE, or raise %s", s.maxSessions(), maxSessionsKey, s.sessionIdle(), s.unconfirmedIdle(), maxSessionsKey))
	s.log.Warn("initialize refused: session limit reached", "limit", s.maxSessions(), "setting", maxSessionsKey)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(max(s.unconfirmedIdle()/2, time.Second).Seconds())))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(append(rpcEnvelope(id, `,"error":`, fmt.Appendf(nil, `{"code":-32000,"message":%s}`, msg)), '\n'))
}

// oversizedInit reports what is too large in an initialize request's
// params, or "" when nothing is.
func oversizedInit(body []byte) string {
	var req struct {
		Params struct {
			ClientInfo   json.RawMessage `json:"clientInfo"`
			Capabilities json.RawMessage `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "" // mcp-go says what is wrong with it
	}
	switch {
	case len(req.Params.ClientInfo) > maxClientInfo:
		return fmt.Sprintf("clientInfo is %d bytes; the gateway takes at most %d (a name, a version and icons by URL fit in far less)", len(req.Params.ClientInfo), maxClientInfo)
	case len(req.Params.Capabilities) > maxClientCaps:
		return fmt.Sprintf("capabilities are %d bytes; the gateway takes at most %d", len(req.Params.Capabilities), maxClientCaps)
	}
	return ""
}

// refuseInit answers an initialize whose params are too large: invalid
// params, HTTP 400.
func refuseInit(w http.ResponseWriter, id json.RawMessage, why string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal("initialize refused: " + why + "; send a smaller one")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(append(rpcEnvelope(id, `,"error":`, fmt.Appendf(nil, `{"code":-32602,"message":%s}`, msg)), '\n'))
}
