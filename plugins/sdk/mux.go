package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// maxQueuedEvents bounds the progress and notification events waiting for
// one call's consumer. A consumer that falls this far behind (a client that
// stopped reading) loses further progress and notifications of that call;
// its result is never dropped, and other calls are never held up.
const maxQueuedEvents = 1024

// mux carries the calls of a protocol 2 connection on one long-lived Calls
// stream instead of a stream per call: no HTTP/2 stream set-up, headers or
// server-side stream dispatch per call. The stream is opened on the first
// call and again after it broke (the plugin went away and a new one may
// answer on the same connection).
//
// With protocol 3 the first stream is the executor's side channel when
// Info set one up; once that ends, later streams are Calls streams.
type mux struct {
	client pb.ExecutorClient
	side   *frameConn // the side channel, until a stream takes it

	mu     sync.Mutex
	cur    *muxStream
	closed bool
}

// callStream is the host's end of the calls: a Calls stream or the side
// channel.
type callStream interface {
	Send(*pb.CallFrame) error
	Recv() (*pb.CallEvent, error)
}

// muxStream is one Calls stream and the calls running on it.
type muxStream struct {
	stream callStream
	cancel context.CancelFunc
	side   bool // the stream is the side channel

	sendMu sync.Mutex // one sender at a time

	mu      sync.Mutex
	pending map[string]*pendingCall
	err     error         // why the stream ended, once done is closed
	done    chan struct{} // closed when the stream ended
}

// pendingCall queues the events of one call for its consumer, in order.
type pendingCall struct {
	mu    sync.Mutex
	queue []*pb.CallEvent
	ready chan struct{} // one slot: "the queue grew"
}

func (p *pendingCall) push(ev *pb.CallEvent) {
	p.mu.Lock()
	if len(p.queue) >= maxQueuedEvents && ev.GetResult() == nil {
		p.mu.Unlock()
		return
	}
	p.queue = append(p.queue, ev)
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

func (p *pendingCall) take(buf []*pb.CallEvent) []*pb.CallEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	buf = append(buf[:0], p.queue...)
	clear(p.queue)
	p.queue = p.queue[:0]
	return buf
}

// stream returns the current Calls stream, opening one if there is none or
// the last one ended.
func (m *mux) stream() (*muxStream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("%w: the executor client is closed", ErrPluginShutdown)
	}
	if s := m.cur; s != nil {
		select {
		case <-s.done:
		default:
			return s, nil
		}
	}
	if fc := m.side; fc != nil {
		m.side = nil
		s := &muxStream{stream: sideClientStream{fc}, cancel: func() { _ = fc.Close() }, side: true,
			pending: make(map[string]*pendingCall), done: make(chan struct{})}
		m.cur = s
		go s.read()
		return s, nil
	}
	// The stream lives as long as the connection, not as long as the call
	// that happened to open it.
	ctx, cancel := context.WithCancel(context.Background())
	st, err := m.client.Calls(ctx)
	if err != nil {
		cancel()
		return nil, fromStatus(ctx, err)
	}
	s := &muxStream{stream: st, cancel: cancel, pending: make(map[string]*pendingCall), done: make(chan struct{})}
	m.cur = s
	go s.read()
	return s, nil
}

// close ends the current stream; running calls fail with ErrPluginShutdown.
func (m *mux) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.cur != nil {
		m.cur.cancel()
	}
	if m.side != nil {
		_ = m.side.Close()
		m.side = nil
	}
}

// setSide hands the mux a side channel for its next stream.
func (m *mux) setSide(fc *frameConn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		_ = fc.Close()
		return
	}
	if m.side != nil {
		_ = m.side.Close()
	}
	m.side = fc
}

// channel names what the next call rides on, as stream would choose:
// "socket" or "stream".
func (m *mux) channel() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.cur; s != nil {
		select {
		case <-s.done:
		default:
			if s.side {
				return "socket"
			}
			return "stream"
		}
	}
	if m.side != nil {
		return "socket"
	}
	return "stream"
}

// read dispatches the stream's events to their calls until it ends, then
// fails every call still running on it.
func (s *muxStream) read() {
	var err error
	for {
		var ev *pb.CallEvent
		ev, err = s.stream.Recv()
		if err != nil {
			break
		}
		s.mu.Lock()
		p := s.pending[ev.CallId]
		if p != nil && ev.GetResult() != nil {
			delete(s.pending, ev.CallId)
		}
		s.mu.Unlock()
		if p != nil { // else a call that was cancelled and forgotten
			p.push(ev)
		}
	}
	switch {
	case err == io.EOF:
		err = fmt.Errorf("%w: the executor ended its calls stream", ErrPluginShutdown)
	case s.side:
		err = fmt.Errorf("%w: the executor's calls channel: %v", ErrPluginShutdown, err)
	default:
		err = fromStatus(context.Background(), err)
	}
	s.mu.Lock()
	s.err = err
	s.pending = nil
	close(s.done)
	s.mu.Unlock()
	s.cancel()
}

// send writes one frame. An error means the stream is gone; the reason
// comes from the reading side.
func (s *muxStream) send(f *pb.CallFrame) error {
	s.sendMu.Lock()
	err := s.stream.Send(f)
	s.sendMu.Unlock()
	if err != nil {
		// A failed write (the side channel's write deadline) leaves the
		// connection unusable; ending it ends the reader too.
		s.cancel()
	}
	return err
}

// call runs one call on the stream and delivers its events to call, in
// order, before returning.
func (s *muxStream) call(ctx context.Context, req *pb.CallRequest, call Call) (result []byte, err error) {
	p := &pendingCall{ready: make(chan struct{}, 1)}
	s.mu.Lock()
	if s.pending == nil {
		s.mu.Unlock()
		<-s.done
		return nil, s.failed(ctx)
	}
	if _, dup := s.pending[req.CallId]; dup {
		s.mu.Unlock()
		return nil, fmt.Errorf("call id %q is already in use", req.CallId)
	}
	s.pending[req.CallId] = p
	s.mu.Unlock()

	if err := s.send(&pb.CallFrame{Frame: &pb.CallFrame_Start{Start: req}}); err != nil {
		s.forget(req.CallId)
		<-s.done
		return nil, s.failed(ctx)
	}
	var buf []*pb.CallEvent
	for {
		select {
		case <-p.ready:
		case <-ctx.Done():
			if s.forget(req.CallId) {
				// Best effort: if the stream is gone, so is the call.
				_ = s.send(&pb.CallFrame{Frame: &pb.CallFrame_Cancel{Cancel: req.CallId}})
			}
			return nil, ctx.Err()
		case <-s.done:
			// Events that arrived before the stream ended still count,
			// the result included.
			buf = p.take(buf)
			if r := deliver(buf, call); r != nil {
				return resultFromPB(ctx, r.Result)
			}
			return nil, s.failed(ctx)
		}
		buf = p.take(buf)
		if r := deliver(buf, call); r != nil {
			return resultFromPB(ctx, r.Result)
		}
	}
}

// deliver hands events to call in order, up to the call's result, which
// it returns (nil while the result has not come).
func deliver(events []*pb.CallEvent, call Call) *pb.CallEvent_Result {
	for _, ev := range events {
		switch e := ev.Event.(type) {
		case *pb.CallEvent_Result:
			return e
		case *pb.CallEvent_Progress:
			if call != nil {
				_ = call.Progress(Progress{Progress: e.Progress.Progress, Total: e.Progress.Total, Message: e.Progress.Message})
			}
		case *pb.CallEvent_Notification:
			if call != nil && e.Notification != nil {
				_ = call.Notify(*notificationFromPB(e.Notification))
			}
		}
	}
	return nil
}

// forget removes a call that will not wait for its result; it reports
// whether the call was still running.
func (s *muxStream) forget(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[id]; !ok {
		return false
	}
	delete(s.pending, id)
	return true
}

// failed is the error of a call whose stream ended under it.
func (s *muxStream) failed(ctx context.Context) error {
	if err := callerErr(ctx); err != nil {
		return err
	}
	if s.err == nil || errors.Is(s.err, context.Canceled) {
		return fmt.Errorf("%w: the calls stream ended", ErrPluginShutdown)
	}
	return s.err
}
