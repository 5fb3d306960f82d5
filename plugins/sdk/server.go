package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// grpcServer serves an Executor on the plugin side.
type grpcServer struct {
	pb.UnimplementedExecutorServer
	impl   Executor
	broker *plugin.GRPCBroker

	// version is the protocol version of the handshake that chose this
	// server (0 for tests that build one by hand, which means 1).
	version int
	// onInfo, when set, is called at every Info request (see Serve).
	onInfo func()

	mu      sync.Mutex
	conn    *grpc.ClientConn
	host    pb.HostClient
	hostSet bool
	side    *sideOffer // the calls side channel offered, protocol 3
}

func (s *grpcServer) hostClient() pb.HostClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

func (s *grpcServer) Info(ctx context.Context, req *pb.InfoRequest) (*pb.InfoResponse, error) {
	if s.onInfo != nil {
		s.onInfo()
	}
	if req.HostBrokerId != 0 && s.broker != nil {
		s.mu.Lock()
		if s.conn == nil {
			conn, err := s.broker.Dial(req.HostBrokerId)
			if err != nil {
				s.mu.Unlock()
				return nil, toStatus(err)
			}
			s.conn = conn
			s.host = pb.NewHostClient(conn)
		}
		host, first := s.host, !s.hostSet
		s.hostSet = true
		s.mu.Unlock()
		if u, ok := s.impl.(HostUser); ok && first {
			u.SetHost(remoteHost{host})
		}
	}
	info, err := s.info(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.InfoResponse{Name: info.Name, Version: info.Version, Kinds: info.Kinds}
	if s.version >= 3 && req.ProtocolVersion >= 3 {
		// Without a socket the host uses the Calls stream, so a failed
		// offer is no error.
		if o := s.offer(); o != nil {
			resp.CallsAddress, resp.CallsToken = o.address, o.token
		}
	}
	return resp, nil
}

// offer returns the side channel offer waiting for the host, opening one
// if there is none; nil when none can be offered, the host has one, or it
// let the offer expire (its calls stay on the Calls stream then).
func (s *grpcServer) offer() *sideOffer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.side != nil {
		if s.side.open() {
			return s.side
		}
		return nil
	}
	o, err := offerSide(func(fc *frameConn) {
		defer fc.Close()
		_ = s.serveCalls(context.Background(),
			func() (*pb.CallFrame, error) {
				f := new(pb.CallFrame)
				if err := fc.read(f); err != nil {
					return nil, err
				}
				return f, nil
			},
			func(ev *pb.CallEvent) error { return fc.write(ev) })
	})
	if err != nil || o == nil {
		return nil
	}
	s.side = o
	return o
}

func (s *grpcServer) Load(ctx context.Context, req *pb.LoadRequest) (*pb.LoadResponse, error) {
	defs, err := s.load(ctx, LoadRequest{Source: req.Source, Kind: req.Kind, Spec: req.Spec})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.LoadResponse{Definitions: defsToPB(&defs)}, nil
}

func (s *grpcServer) Unload(ctx context.Context, req *pb.UnloadRequest) (*pb.UnloadResponse, error) {
	if err := s.unload(ctx, req.Source); err != nil {
		return nil, toStatus(err)
	}
	return &pb.UnloadResponse{}, nil
}

// The executor's methods run behind recover: a panic fails that one
// request with an error naming it and the panic value, and its stack goes
// to stderr (the gateway's log), instead of ending the process and with it
// every call in flight, of every source.

func (s *grpcServer) info(ctx context.Context) (info Info, err error) {
	defer recoverTo(&err, "Info")
	return s.impl.Info(ctx)
}

func (s *grpcServer) load(ctx context.Context, req LoadRequest) (defs Definitions, err error) {
	defer recoverTo(&err, "Load of source %q", req.Source)
	return s.impl.Load(ctx, req)
}

func (s *grpcServer) unload(ctx context.Context, source string) (err error) {
	defer recoverTo(&err, "Unload of source %q", source)
	return s.impl.Unload(ctx, source)
}

func (s *grpcServer) call(ctx context.Context, req CallRequest, call Call) (res json.RawMessage, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, panicError(v, describeCall(req))
		}
	}()
	return s.impl.Call(ctx, req, call)
}

// recoverTo, deferred, turns a panic into *err; what and args describe the
// request, as for fmt.Sprintf.
func recoverTo(err *error, what string, args ...any) {
	if v := recover(); v != nil {
		*err = panicError(v, fmt.Sprintf(what, args...))
	}
}

// panicError logs a recovered panic with its stack and returns the error
// the request fails with.
func panicError(v any, what string) error {
	msg := fmt.Sprint(v)
	hclog.New(&hclog.LoggerOptions{Name: "executor", Output: os.Stderr, JSONFormat: true}).Error(
		"executor panicked; the request failed, the executor keeps running",
		"request", what, "panic", msg, "stack", string(debug.Stack()))
	if len(msg) > maxPanicMessage {
		msg = msg[:maxPanicMessage] + "..."
	}
	return fmt.Errorf("executor panicked in %s: %s", what, msg)
}

// maxPanicMessage bounds the panic value in a request's error; the log has
// all of it.
const maxPanicMessage = 500

// describeCall names a call's method and what it ran: `tools/call of tool
// "greet" (source "a")`.
func describeCall(req CallRequest) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(req.Params, &p)
	what := req.Method
	switch {
	case req.Method == "tools/call" && p.Name != "":
		what += fmt.Sprintf(" of tool %q", p.Name)
	case req.Method == "prompts/get" && p.Name != "":
		what += fmt.Sprintf(" of prompt %q", p.Name)
	case p.URI != "":
		what += fmt.Sprintf(" of %s", p.URI)
	}
	return what + fmt.Sprintf(" (source %q)", req.Source)
}

func (s *grpcServer) Call(req *pb.CallRequest, stream pb.Executor_CallServer) error {
	call := &streamCall{out: stream.Send, host: s.hostClient(), callID: req.CallId}
	res, err := s.call(stream.Context(), CallRequest{
		Source: req.Source, Method: req.Method, Params: req.Params, CallID: req.CallId, Client: req.Client,
	}, call)
	// Whatever the outcome, nothing may be sent on the stream after this
	// handler returns, even by goroutines the executor left running.
	call.mu.Lock()
	defer call.mu.Unlock()
	call.done = true
	result, err := resultToPB(res, err)
	if err != nil {
		return err
	}
	return stream.Send(&pb.CallEvent{Event: &pb.CallEvent_Result{Result: result}})
}

// Calls serves protocol 2's multiplexed stream: every frame starts or
// cancels a call; calls run concurrently on reused goroutines and their
// events go out tagged with their ids. When the stream ends, every call
// still running is cancelled and nothing more is sent.
func (s *grpcServer) Calls(stream pb.Executor_CallsServer) error {
	return s.serveCalls(stream.Context(), stream.Recv, stream.Send)
}

// serveCalls serves the Calls protocol on any carrier: the gRPC stream or
// the side channel. recv returns io.EOF when the host ended the calls.
func (s *grpcServer) serveCalls(ctx context.Context, recv func() (*pb.CallFrame, error), send func(*pb.CallEvent) error) error {
	out := &callsOut{write: send}
	pool := newWorkers()
	var mu sync.Mutex
	running := make(map[string]context.CancelFunc)
	defer func() {
		out.close()
		pool.close()
		mu.Lock()
		for _, cancel := range running {
			cancel()
		}
		mu.Unlock()
	}()
	host := s.hostClient()
	for {
		f, err := recv()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		switch fr := f.Frame.(type) {
		case *pb.CallFrame_Cancel:
			mu.Lock()
			if cancel := running[fr.Cancel]; cancel != nil {
				cancel()
			}
			mu.Unlock()
		case *pb.CallFrame_Start:
			req := fr.Start
			if req == nil {
				continue
			}
			mu.Lock()
			_, dup := running[req.CallId]
			var cctx context.Context
			var cancel context.CancelFunc
			if !dup {
				cctx, cancel = context.WithCancel(ctx)
				running[req.CallId] = cancel
			}
			mu.Unlock()
			if dup {
				out.send(req.CallId, &pb.CallEvent{Event: &pb.CallEvent_Result{Result: resultToFramePB(nil,
					fmt.Errorf("call id %q is already in use", req.CallId))}})
				continue
			}
			pool.run(func() {
				defer cancel()
				id := req.CallId
				call := &streamCall{out: func(ev *pb.CallEvent) error { return out.send(id, ev) }, host: host, callID: id}
				res, err := s.call(cctx, CallRequest{
					Source: req.Source, Method: req.Method, Params: req.Params, CallID: id, Client: req.Client,
				}, call)
				call.finish()
				mu.Lock()
				delete(running, id)
				mu.Unlock()
				_ = out.send(id, &pb.CallEvent{Event: &pb.CallEvent_Result{Result: resultToFramePB(res, err)}})
			})
		}
	}
}

// callsOut serialises sends on a Calls stream and stops them once the
// handler returned.
type callsOut struct {
	mu     sync.Mutex
	write  func(*pb.CallEvent) error
	closed bool
}

func (o *callsOut) send(id string, ev *pb.CallEvent) error {
	ev.CallId = id
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	return o.write(ev)
}

func (o *callsOut) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// workers runs calls on goroutines that outlive one call: a call's stack
// (executor, upstream wire, JSON) is deep, and a fresh goroutine would grow
// its stack again for every call. Idle workers wait for the next call until
// the stream ends; there are never more than the most calls ever in flight.
type workers struct {
	tasks chan func()
	quit  chan struct{}
}

func newWorkers() *workers {
	return &workers{tasks: make(chan func()), quit: make(chan struct{})}
}

func (w *workers) run(f func()) {
	select {
	case w.tasks <- f: // an idle worker took it
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	for {
		f()
		select {
		case f = <-w.tasks:
		case <-w.quit:
			return
		}
	}
}

func (w *workers) close() { close(w.quit) }

func (s *grpcServer) Watch(req *pb.WatchRequest, stream pb.Executor_WatchServer) error {
	w, ok := s.impl.(Watcher)
	if !ok {
		<-stream.Context().Done()
		return nil
	}
	var mu sync.Mutex
	done := false
	defer func() {
		mu.Lock()
		done = true
		mu.Unlock()
	}()
	err := w.Watch(stream.Context(), func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		_ = stream.Send(&pb.ChangeEvent{
			Source:       c.Source,
			Definitions:  defsToPB(c.Definitions),
			Notification: notificationToPB(c.Notification),
			Status:       statusToPB(c.Status),
		})
	})
	return toStatus(err)
}

// streamCall is the plugin side's Call: events go out on the call's stream,
// requests go to the host over the broker.
type streamCall struct {
	out    func(*pb.CallEvent) error
	host   pb.HostClient
	callID string

	mu   sync.Mutex
	done bool
}

var _ Call = (*streamCall)(nil)

func (c *streamCall) send(ev *pb.CallEvent, what string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.ended(what)
	}
	return c.out(ev)
}

// ended is the error of a method used after the call returned.
func (c *streamCall) ended(what string) error {
	return fmt.Errorf("%w: %s after call %q returned", ErrCallEnded, what, c.callID)
}

func (c *streamCall) isDone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// finish stops the call's events: nothing is sent for it after this, even
// by goroutines the executor left running.
func (c *streamCall) finish() {
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

func (c *streamCall) Progress(p Progress) error {
	return c.send(&pb.CallEvent{Event: &pb.CallEvent_Progress{Progress: &pb.Progress{
		Progress: p.Progress, Total: p.Total, Message: p.Message,
	}}}, "progress")
}

func (c *streamCall) Notify(n Notification) error {
	return c.send(&pb.CallEvent{Event: &pb.CallEvent_Notification{Notification: notificationToPB(&n)}}, n.Method)
}

func (c *streamCall) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if c.isDone() {
		return nil, c.ended(method)
	}
	if c.host == nil {
		return nil, ErrUnsupported
	}
	resp, err := c.host.ClientRequest(ctx, &pb.ClientRequestRequest{CallId: c.callID, Method: method, Params: params})
	if err != nil {
		return nil, fromStatus(ctx, err)
	}
	return resultFromPB(ctx, resp.Result)
}

func (c *streamCall) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if c.isDone() {
		return nil, c.ended(fmt.Sprintf("CallTool %q", name))
	}
	if c.host == nil {
		return nil, ErrUnsupported
	}
	resp, err := c.host.CallTool(ctx, &pb.HostCallToolRequest{CallId: c.callID, Name: name, Arguments: args})
	if err != nil {
		return nil, fromStatus(ctx, err)
	}
	return resultFromPB(ctx, resp.Result)
}

// remoteHost is the plugin side's Host.
type remoteHost struct{ client pb.HostClient }

// Log sends the record to the gateway's log service. When that is gone
// (the gateway closes the connection before it has Shutdown called, or it
// died) the record goes to the process's stderr as a JSON line, which
// the gateway reads until the process exits and logs with the line's
// level, message and fields.
func (h remoteHost) Log(ctx context.Context, level, msg string, attrs map[string]string) error {
	_, err := h.client.Log(ctx, &pb.LogRequest{Level: level, Message: msg, Attrs: attrs})
	err = fromStatus(ctx, err)
	if errors.Is(err, ErrPluginShutdown) {
		if werr := logLine(ownStderr, level, msg, attrs); werr == nil {
			return nil
		}
	}
	return err
}

// ownStderr is the process's stderr, taken before go-plugin's Serve
// points os.Stderr at a pipe of its own.
var ownStderr io.Writer = os.Stderr

// logLine writes one record as hclog's JSON lines are written.
func logLine(w io.Writer, level, msg string, attrs map[string]string) error {
	rec := make(map[string]string, len(attrs)+4)
	for k, v := range attrs {
		rec[k] = v
	}
	rec["@level"], rec["@message"], rec["@module"] = level, msg, "executor"
	rec["@timestamp"] = time.Now().Format("2006-01-02T15:04:05.000000Z07:00")
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
