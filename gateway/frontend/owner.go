package frontend

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
)

// A 2025-11-25-era session belongs to the bearer token that initialized
// it: with auth.tokens [A, B], a session made with A is unknown (404, as
// the transport answers for a session the server does not hold) to a
// request sent with B. The session keeps a fingerprint of the token, not
// the token. Streams that wait for notifications hold a connection and a
// goroutine each, so they are capped too: one GET stream per session (a
// second gets 409 Conflict, as the reference SDKs answer it), and
// Options.MaxListenStreams 2026-07-28 subscriptions/listen streams in all.

// defaultMaxListenStreams is how many subscriptions/listen streams may be
// open at once over HTTP.
const defaultMaxListenStreams = 1000

// tokenFingerprint is the fingerprint of r's bearer token ("" when none).
func tokenFingerprint(r *http.Request) [sha256.Size]byte {
	return sha256.Sum256([]byte(bearerToken(r)))
}

// foreignSession reports whether id names a live session that another
// bearer token than r's initialized.
func (s *Server) foreignSession(id string, r *http.Request) bool {
	v, ok := s.sessions.Load(id)
	if !ok {
		return false
	}
	owner, fp := v.(*session).owner, tokenFingerprint(r)
	return subtle.ConstantTimeCompare(owner[:], fp[:]) != 1
}

// streamConflict answers a GET for a session whose GET stream is open.
func streamConflict(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusConflict)
	_, _ = w.Write(append(rpcEnvelope([]byte("null"), `,"error":`, []byte(`{"code":-32000,"message":"Conflict: this session's GET stream is already open; a session has one (close the other, or wait until the gateway notices it closed)"}`)), '\n'))
}

// maxListenStreams is the configured cap on subscriptions/listen streams.
func (s *Server) maxListenStreams() int64 {
	if s.opts.MaxListenStreams > 0 {
		return int64(s.opts.MaxListenStreams)
	}
	return defaultMaxListenStreams
}

// reserveListen takes a place for a subscriptions/listen stream,
// reporting false when every place is taken. The caller gives a place it
// took back with nlisten.Add(-1).
func (s *Server) reserveListen() bool {
	if s.nlisten.Add(1) > s.maxListenStreams() {
		s.nlisten.Add(-1)
		return false
	}
	return true
}

// tooManyListens answers a subscriptions/listen refused because the
// gateway serves as many as it may: 503 with Retry-After.
func (s *Server) tooManyListens(w http.ResponseWriter, id []byte) {
	if len(id) == 0 {
		id = []byte("null")
	}
	s.log.Warn("subscriptions/listen refused: stream limit reached", "limit", s.maxListenStreams())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "30")
	w.WriteHeader(http.StatusServiceUnavailable)
	msg := fmt.Appendf(nil, `{"code":-32000,"message":"too many subscriptions/listen streams: the gateway serves at most %d at once and all are open; close streams you no longer use, or retry later"}`, s.maxListenStreams())
	_, _ = w.Write(append(rpcEnvelope(id, `,"error":`, msg), '\n'))
}
