package mcp

import (
	"context"
	"log/slog"
	"sync"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// maxQueuedEvents bounds the events of one call waiting for a slow client.
// Past it, log notifications are dropped and only the latest progress is
// kept, so the final progress report is never lost.
const maxQueuedEvents = 1024

// event is a progress report or a notification for one call.
type event struct {
	progress *sdk.Progress
	note     *sdk.Notification
}

// eventQueue delivers a call's events to its sdk.Call in order, off the
// upstream's reader goroutine. The delivering goroutine only exists while
// events are waiting, so calls without events cost nothing.
type eventQueue struct {
	call sdk.Call

	mu       sync.Mutex
	q        []event
	latest   *sdk.Progress // newest progress that did not fit in q
	running  bool
	closed   bool
	gone     bool          // the call returned: deliver nothing more
	drained  chan struct{} // closed when the running pump empties q
	dropped  int
	log      *slog.Logger // told how many events a slow client missed
	delivery sync.Mutex   // serializes deliveries across pump generations
}

// push queues ev; it never blocks.
func (e *eventQueue) push(ev event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if len(e.q) >= maxQueuedEvents {
		if ev.progress != nil {
			e.latest = ev.progress
		} else {
			e.dropped++
		}
		return
	}
	e.q = append(e.q, ev)
	if !e.running {
		e.running = true
		e.drained = make(chan struct{})
		go e.pump(e.drained)
	}
}

func (e *eventQueue) pump(drained chan struct{}) {
	e.delivery.Lock()
	defer e.delivery.Unlock()
	for {
		e.mu.Lock()
		var ev event
		switch {
		case e.gone:
			e.q, e.latest = nil, nil
			e.running = false
			close(drained)
			e.mu.Unlock()
			return
		case len(e.q) > 0:
			ev = e.q[0]
			e.q[0] = event{}
			e.q = e.q[1:]
		case e.latest != nil:
			ev = event{progress: e.latest}
			e.latest = nil
		default:
			e.q = nil
			e.running = false
			close(drained)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		if ev.progress != nil {
			_ = e.call.Progress(*ev.progress)
		} else if ev.note != nil {
			_ = e.call.Notify(*ev.note)
		}
	}
}

// flush stops taking events and waits until the queued ones are delivered
// (or ctx ends), so that every event reaches the client before the result.
func (e *eventQueue) flush(ctx context.Context) {
	e.mu.Lock()
	e.closed = true
	drained, running, dropped := e.drained, e.running, e.dropped
	e.mu.Unlock()
	if dropped > 0 && e.log != nil {
		e.log.Warn("dropped log notifications of a call whose client was too slow", "dropped", dropped)
	}
	if !running {
		return
	}
	select {
	case <-drained:
	case <-ctx.Done():
		e.mu.Lock()
		e.gone = true
		e.mu.Unlock()
	}
}
