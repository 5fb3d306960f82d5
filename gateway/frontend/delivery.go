package frontend

import (
	"context"
	"sync"
	"time"
)

// delivery counts the notifications a request's handler sent and those its
// HTTP answer has written, so the handler can hold its result until every
// notification is out. mcp-go forwards notifications on another goroutine
// and may drop one still in flight when the result is written (its issue
// #969), in both protocol eras.
type delivery struct {
	mu      sync.Mutex
	sent    int
	written int
	more    chan struct{} // closed and replaced on every write
}

type deliveryKey struct{}

func withDelivery(ctx context.Context) (context.Context, *delivery) {
	d := &delivery{more: make(chan struct{})}
	return context.WithValue(ctx, deliveryKey{}, d), d
}

func deliveryFrom(ctx context.Context) *delivery {
	d, _ := ctx.Value(deliveryKey{}).(*delivery)
	return d
}

func (d *delivery) noteSent() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.sent++
	d.mu.Unlock()
}

func (d *delivery) noteWritten() {
	d.mu.Lock()
	d.written++
	close(d.more)
	d.more = make(chan struct{})
	d.mu.Unlock()
}

// wait blocks until every sent notification was written, or for at most
// limit (a notification may legitimately go to another stream).
func (d *delivery) wait(ctx context.Context, limit time.Duration) {
	if d == nil {
		return
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		d.mu.Lock()
		done, more := d.written >= d.sent, d.more
		d.mu.Unlock()
		if done {
			return
		}
		select {
		case <-more:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
