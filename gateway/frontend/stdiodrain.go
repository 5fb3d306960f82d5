package frontend

import (
	"context"
	"encoding/json"
	"time"
)

// How a stdio client's connection stops.
//
// When ServeStdio's ctx ends (the gateway is asked to stop: SIGTERM,
// Ctrl-C) and the client is still connected, the connection drains as the
// HTTP front end does: requests that come from then on are answered at
// once with ErrStopping; those in flight get StdioDrain.Timeout to finish
// and are answered as usual; those still running then are cancelled (so
// their sources are told) and answered with ErrStopping, and ServeStdio
// returns. The client's answers to the gateway's own requests (sampling,
// elicitation) and its notifications go on being read meanwhile: a call
// in flight may need them.
//
// When the client closes stdin, it has ended the connection: under the
// MCP stdio transport closing stdin is how a client shuts a server down,
// and it then waits for the server to exit (and kills it if that takes
// long). No drain would be waited for by anyone, so the requests in flight
// are cancelled at once, their sources told, and no answers are written.
// A broken stdout (the client stopped reading) ends it the same way.

// StdioDrain is how a stdio connection drains when ServeStdio's ctx ends
// while its client is still connected (see WithStdioDrain).
type StdioDrain struct {
	// Timeout is how long requests in flight get to finish
	// (limits.drain_timeout); 0 cuts them at once.
	Timeout time.Duration
	// Now, when closed, ends the wait early (a second signal).
	Now <-chan struct{}
}

type stdioDrainKey struct{}

// WithStdioDrain returns ctx carrying d, for ServeStdio: without it a
// stop cuts the requests in flight at once (answering them ErrStopping).
func WithStdioDrain(ctx context.Context, d StdioDrain) context.Context {
	return context.WithValue(ctx, stdioDrainKey{}, d)
}

// stdioDrainOf is the StdioDrain ctx carries.
func stdioDrainOf(ctx context.Context) StdioDrain {
	d, _ := ctx.Value(stdioDrainKey{}).(StdioDrain)
	return d
}

// drain runs the stop of a stdio connection whose client is still there
// (see above): it refuses new requests, waits for those in flight up to
// d.Timeout (or d.Now, or the client going: gone), then answers those
// still running with ErrStopping and ends the connection with cause.
func (sr *stdioRequests) drain(d StdioDrain, ow *outWriter, gone <-chan struct{}, end context.CancelCauseFunc, cause error) {
	idle := sr.stopAccepting()
	if n := sr.inFlight(); n > 0 {
		sr.s.log.Info("stdio: stopping; requests in flight get limits.drain_timeout to finish", "requests", n, "drain_timeout", d.Timeout)
	}
	t := time.NewTimer(d.Timeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-d.Now:
	case <-gone:
	}
	if cut := sr.cutAll(); len(cut) > 0 {
		sr.s.log.Warn("stdio: requests still running after limits.drain_timeout; answering them with an error that asks to send them again",
			"drain_timeout", d.Timeout, "cut", len(cut))
		for _, id := range cut {
			_ = ow.writeLine(answer(id, nil, ErrStopping))
		}
	}
	end(cause)
}

// stopAccepting makes the connection refuse new requests, and returns a
// channel closed once no request is in flight.
func (sr *stdioRequests) stopAccepting() <-chan struct{} {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.stopping = true
	sr.idle = make(chan struct{})
	if len(sr.pending) == 0 {
		close(sr.idle)
		sr.idle = nil
		return closedChan
	}
	return sr.idle
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// inFlight is the number of requests not answered yet.
func (sr *stdioRequests) inFlight() int {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return len(sr.pending)
}

// cutAll marks every request in flight as answered by the front end (an
// answer mcp-go still writes is dropped), cancels those the front end
// runs itself, and returns their client ids, for the caller to answer.
// The requests mcp-go runs are cancelled when the connection ends.
func (sr *stdioRequests) cutAll() []json.RawMessage {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	var ids []json.RawMessage
	for _, req := range sr.pending {
		if req.cancelled {
			continue // the client cancelled it: it gets no answer
		}
		req.cancelled = true
		if req.cancel != nil {
			req.cancel()
		}
		ids = append(ids, req.clientID)
	}
	return ids
}
