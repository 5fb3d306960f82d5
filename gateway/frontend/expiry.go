package frontend

import (
	"context"
	"sync/atomic"
	"time"
)

// Sessions of the 2025-11-25 era and older end with a DELETE, which many
// clients never send (a CLI run, a crashed editor). A session unused for
// Options.SessionIdle is ended as a DELETE would end it: the gateway
// forgets it, its activations and subscriptions go, and mcp-go unregisters
// it; a client that comes back with it gets 404 and initializes again, as
// the transport prescribes. A session with an open GET stream is in use.

// defaultSessionIdle is how long an unused session lives, as its
// activations do (disclosure.Options.SessionIdle).
const defaultSessionIdle = 24 * time.Hour

// sessionUse is what expiry knows of a session.
type sessionUse struct {
	used    atomic.Int64 // unix nanoseconds of the last request
	streams atomic.Int32 // GET streams open
}

func (u *sessionUse) touch(now time.Time) { u.used.Store(now.UnixNano()) }

// idleSince reports whether the session was unused since cutoff.
func (u *sessionUse) idleSince(cutoff time.Time) bool {
	return u.streams.Load() == 0 && u.used.Load() < cutoff.UnixNano()
}

// sessionIdle is the configured idle limit.
func (s *Server) sessionIdle() time.Duration {
	if s.opts.SessionIdle > 0 {
		return s.opts.SessionIdle
	}
	return defaultSessionIdle
}

// expireSessions ends the sessions unused for sessionIdle. It runs as
// sessions start and are used, at most once per interval (a minute, or the
// idle limit when shorter), so a gateway nobody talks to has nothing to do.
func (s *Server) expireSessions(now time.Time) {
	idle := s.sessionIdle()
	last := s.swept.Load()
	if now.UnixNano()-last < min(time.Minute, idle).Nanoseconds() || !s.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	cutoff := now.Add(-idle)
	s.sessions.Range(func(k, v any) bool {
		sess := v.(*session)
		if sess.use.idleSince(cutoff) {
			s.endSession(sess.id)
			s.log.Info("session ended after being unused", "idle", idle.String())
		}
		return true
	})
}

// endSession forgets session id and everything kept for it.
func (s *Server) endSession(id string) {
	s.sessions.Delete(id)
	s.endSessionStreams(id)
	s.Disclosure().EndSession(id)
	if _, ok := s.clients.Load(id); ok {
		s.mcp.UnregisterSession(context.Background(), id) // its hook ends the subscriptions
	}
}
