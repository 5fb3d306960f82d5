package frontend

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// A request body that stops arriving would hold its connection, and its
// handler, for as long as the client keeps the connection open: the
// server's ReadTimeout cannot bound it, since it would end the long-lived
// GET streams too. So each request with a body reads it under a deadline
// on the connection: a body must keep arriving (bodyStall between reads)
// and arrive whole within bodyTotal. Once the body is read, the deadline
// is lifted, so an answer streamed for minutes is not cut.

// bodyLimits are the deadlines of request bodies.
type bodyLimits struct {
	stall time.Duration // how long a body may send nothing
	total time.Duration // how long a whole body may take
}

// defaultBodyLimits: a stalled body goes after 10 s; 4 MiB take a minute
// at 70 KiB/s.
var defaultBodyLimits = bodyLimits{stall: 10 * time.Second, total: 60 * time.Second}

// BoundBodies returns h with its requests' bodies read under the front
// end's deadlines (see stall.go); the endpoint (Handler) and Guard apply
// them already, and a body is bounded once however often it is wrapped.
func (s *Server) BoundBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, s.boundBody(w, r))
	})
}

// boundBody returns r with its body read under the deadlines, or r as it
// is when it has no body or its connection takes no deadline.
func (s *Server) boundBody(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Body == nil || r.Body == http.NoBody {
		return r
	}
	if _, ok := r.Body.(*stallBody); ok {
		return r
	}
	now := time.Now()
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(now.Add(s.bodyLimits.stall)) != nil {
		return r
	}
	r2 := *r
	r2.Body = &stallBody{ReadCloser: r.Body, rc: rc, stall: s.bodyLimits.stall, end: now.Add(s.bodyLimits.total)}
	return &r2
}

// stallBody moves the read deadline on as the body arrives and lifts it
// when the body ends. A body its handler leaves unread keeps the deadline,
// which then bounds the server's own reading of the rest.
type stallBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	stall time.Duration
	end   time.Time // the whole body's deadline
	done  bool
}

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case err != nil:
		b.done = true
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	case n > 0:
		next := time.Now().Add(b.stall)
		if next.After(b.end) {
			next = b.end
		}
		_ = b.rc.SetReadDeadline(next)
	}
	return n, err
}

// stalled reports whether err is a body read that hit its deadline.
func stalled(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// bodyStalled answers a request whose body stopped arriving: 408.
func (s *Server) bodyStalled(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	http.Error(w, "Request Timeout: the request body stopped arriving (nothing for "+s.bodyLimits.stall.String()+
		", or not whole within "+s.bodyLimits.total.String()+"); send the whole body without pauses", http.StatusRequestTimeout)
}
