package frontend

import (
	"context"
	"net/http"
	"slices"
	"strings"
)

// Long-lived streams (a 2025-11-25 session's GET stream, a 2026-07-28
// subscriptions/listen) outlive the checks made when they opened. The
// front end keeps them here so that it can end one whose bearer token a
// reload revoked, and a session's when the session ends.

// openStream is one stream being served.
type openStream struct {
	session string // "" for a 2026-07-28 stream
	token   string // the bearer token it was opened with; "" when none
	cancel  context.CancelFunc
}

// trackStream registers the stream r opens and returns the request to
// serve it with, whose context ends when the stream must; done removes
// the registration.
func (s *Server) trackStream(r *http.Request, session string) (*http.Request, func()) {
	ctx, cancel := context.WithCancel(r.Context())
	st := &openStream{session: session, token: bearerToken(r), cancel: cancel}
	s.streams.Store(st, struct{}{})
	return r.WithContext(ctx), func() {
		s.streams.Delete(st)
		cancel()
	}
}

// endStreams ends the streams for which end reports true.
func (s *Server) endStreams(end func(*openStream) bool) {
	s.streams.Range(func(k, _ any) bool {
		if st := k.(*openStream); end(st) {
			st.cancel()
		}
		return true
	})
}

// EndStreams ends every long-lived stream (GET streams, 2026-07-28
// subscriptions/listen): they wait for notifications only, so a stopping
// gateway ends them at once rather than waiting for them as for requests
// in flight. Clients reconnect to another replica or when it is back.
func (s *Server) EndStreams() {
	s.endStreams(func(*openStream) bool { return true })
}

// endRevokedStreams ends the streams opened with a token that tokens no
// longer holds (none, when tokens is empty: every request is let in).
func (s *Server) endRevokedStreams(tokens []string) {
	if len(tokens) == 0 {
		return
	}
	s.endStreams(func(st *openStream) bool { return !slices.Contains(tokens, st.token) })
}

// endSessionStreams ends the streams of session id.
func (s *Server) endSessionStreams(id string) {
	s.endStreams(func(st *openStream) bool { return st.session == id })
}

// bearerToken is the token of r's Authorization header, or "".
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return h[len(prefix):]
}
