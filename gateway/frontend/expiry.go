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
	// confirmed is set once the client sent anything in the session
	// after initialize; until then the session lives only
	// Options.UnconfirmedIdle.
	confirmed atomic.Bool
}

func (u *sessionUse) touch(now time.Time) { u.used.Store(now.UnixNano()) }

// idleSince reports whether the session was unused since cutoff, or since
// unconfirmed when its client never used it after initialize.
func (u *sessionUse) idleSince(cutoff, unconfirmed time.Time) bool {
	if !u.confirmed.Load() && u.used.Load() < unconfirmed.UnixNano() {
		return true
	}
	return u.streams.Load() == 0 && u.used.Load() < cutoff.UnixNano()
}

// sessionIdle is the configured idle limit.
func (s *Server) sessionIdle() time.Duration {
	if s.opts.SessionIdle > 0 {
		return s.opts.SessionIdle
	}
	return defaultSessionIdle
}

// expireSessions ends the sessions unused for sessionIdle, and those
// never used after initialize for unconfirmedIdle. It runs as sessions
// start and are used, at most once per interval (a minute, or half the
// shorter limit when less), so a gateway nobody talks to has nothing to do.
func (s *Server) expireSessions(now time.Time) {
	idle, unconfirmed := s.sessionIdle(), s.unconfirmedIdle()
	last := s.swept.Load()
	if now.UnixNano()-last < min(time.Minute, idle, unconfirmed/2).Nanoseconds() || !s.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	cutoff, unconfirmedCutoff := now.Add(-idle), now.Add(-unconfirmed)
	s.sessions.Range(func(k, v any) bool {
		sess := v.(*session)
		if sess.use.idleSince(cutoff, unconfirmedCutoff) {
			s.endSession(sess.id)
			if sess.use.confirmed.Load() {
				s.log.Info("session ended after being unused", "idle", idle.String())
			} else {
				s.log.Info("session ended: its client sent nothing after initialize", "idle", unconfirmed.String())
			}
		}
		return true
	})
}

// endSession forgets session id and everything kept for it.
func (s *Server) endSession(id string) {
	s.forgetSession(id)
	s.endSessionStreams(id)
	s.endSessionCalls(id)
	s.Disclosure().EndSession(id)
	if _, ok := s.clients.Load(id); ok {
		s.mcp.UnregisterSession(context.Background(), id) // its hook ends the subscriptions
	}
}
