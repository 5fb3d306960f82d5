package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk/internal/link"
	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// client is the gateway's side of an executor plugin, which package
// hostside exports as Client. It implements Executor and Watcher by calling
// the plugin, and serves the plugin's callbacks (CallTool, ClientRequest)
// by routing them to the Call that the running request was given.
type client struct {
	client pb.ExecutorClient
	broker *plugin.GRPCBroker
	host   Host
	hostID uint32

	mu      sync.Mutex
	server  *grpc.Server
	closed  bool
	sideErr error // why the offered side channel could not be opened

	calls  sync.Map // call id -> Call
	nextID atomic.Uint64

	// version is the protocol version negotiated in the handshake; from 2
	// on, calls share one Calls stream (mux), from 3 on the executor's
	// side channel when it offers one.
	version int
	mux     mux
}

var (
	_ Executor = (*client)(nil)
	_ Watcher  = (*client)(nil)
)

func newClient(broker *plugin.GRPCBroker, conn *grpc.ClientConn, host Host, version int) *client {
	c := &client{client: pb.NewExecutorClient(conn), broker: broker, host: host, version: version}
	c.mux.client = c.client
	if broker != nil {
		c.hostID = broker.NextId()
		go broker.AcceptAndServe(c.hostID, func(opts []grpc.ServerOption) *grpc.Server {
			srv := link.NewGRPCServer(opts)
			pb.RegisterHostServer(srv, &hostServer{c: c})
			c.mu.Lock()
			defer c.mu.Unlock()
			c.server = srv
			if c.closed {
				srv.Stop()
			}
			return srv
		})
	}
	return c
}

// Info implements Executor. It also hands the plugin the host service.
func (c *client) Info(ctx context.Context) (Info, error) {
	resp, err := c.client.Info(ctx, &pb.InfoRequest{HostBrokerId: c.hostID, ProtocolVersion: ProtocolVersion})
	if err != nil {
		return Info{}, fromStatus(ctx, err)
	}
	if c.version >= 3 && resp.CallsAddress != "" {
		// Calls fall back to the Calls stream when the side channel
		// cannot be opened; CallsChannel says which one they use.
		fc, err := dialSide(ctx, resp.CallsAddress, resp.CallsToken)
		if err == nil {
			c.mux.setSide(fc)
		}
		c.mu.Lock()
		c.sideErr = err
		c.mu.Unlock()
	}
	return Info{Name: resp.Name, Version: resp.Version, Kinds: resp.Kinds}, nil
}

// CallsChannel says what the next call rides on: "socket" (the executor's
// side channel, protocol 3) or "stream" (a gRPC stream); err is why a side
// channel the executor offered could not be opened.
func (c *client) CallsChannel() (channel string, err error) {
	c.mu.Lock()
	err = c.sideErr
	c.mu.Unlock()
	return c.mux.channel(), err
}

// Load implements Executor.
func (c *client) Load(ctx context.Context, req LoadRequest) (Definitions, error) {
	resp, err := c.client.Load(ctx, &pb.LoadRequest{Source: req.Source, Kind: req.Kind, Spec: req.Spec})
	if err != nil {
		return Definitions{}, fromStatus(ctx, err)
	}
	return defsFromPB(resp.Definitions), nil
}

// Unload implements Executor.
func (c *client) Unload(ctx context.Context, source string) error {
	_, err := c.client.Unload(ctx, &pb.UnloadRequest{Source: source})
	return fromStatus(ctx, err)
}

// Call implements Executor. Events from the plugin are delivered to call
// in the order the plugin sent them, before Call returns. call may be nil:
// the events are dropped then, and the plugin's callbacks (Request,
// CallTool) fail with ErrCallEnded, as they do once Call returned.
func (c *client) Call(ctx context.Context, req CallRequest, call Call) (json.RawMessage, error) {
	if req.CallID == "" {
		req.CallID = strconv.FormatUint(c.nextID.Add(1), 36)
	}
	if call != nil {
		if _, loaded := c.calls.LoadOrStore(req.CallID, call); loaded {
			return nil, fmt.Errorf("call id %q is already in use", req.CallID)
		}
		defer c.calls.Delete(req.CallID)
	}
	preq := &pb.CallRequest{Source: req.Source, Method: req.Method, Params: req.Params, CallId: req.CallID, Client: req.Client}
	if c.version >= 2 {
		s, err := c.mux.stream()
		if err != nil {
			return nil, err
		}
		return s.call(ctx, preq, call)
	}
	stream, err := c.client.Call(ctx, preq)
	if err != nil {
		return nil, fromStatus(ctx, err)
	}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: the call ended without a result", ErrPluginShutdown)
		}
		if err != nil {
			return nil, fromStatus(ctx, err)
		}
		one := [1]*pb.CallEvent{ev}
		if r := deliver(one[:], call); r != nil {
			return resultFromPB(ctx, r.Result)
		}
	}
}

// Watch implements Watcher. It returns nil when ctx is done and an error
// wrapping ErrPluginShutdown when the plugin goes away.
func (c *client) Watch(ctx context.Context, emit func(Change)) error {
	stream, err := c.client.Watch(ctx, &pb.WatchRequest{})
	if err != nil {
		return fromStatus(ctx, err)
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if err == io.EOF {
				return nil
			}
			return fromStatus(ctx, err)
		}
		ch := Change{
			Source:       ev.Source,
			Notification: notificationFromPB(ev.Notification),
			Status:       statusFromPB(ev.Status),
		}
		if ev.Definitions != nil {
			d := defsFromPB(ev.Definitions)
			ch.Definitions = &d
		}
		emit(ch)
	}
}

// Version is the executor protocol version negotiated with the plugin.
func (c *client) Version() int { return c.version }

// Close stops the host callback service and ends the calls stream. The
// plugin process itself is owned by whoever started it.
func (c *client) Close() error {
	c.mux.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && c.server != nil {
		c.server.Stop()
	}
	c.closed = true
	return nil
}

// hostServer serves the plugin's callbacks on the gateway side.
type hostServer struct {
	pb.UnimplementedHostServer
	c *client
}

func (h *hostServer) call(id string) (Call, error) {
	v, ok := h.c.calls.Load(id)
	if !ok {
		// Its Client.Call returned (the result is in, or the gateway
		// stopped waiting: the client cancelled, a timeout), or it was
		// made without a Call, which is no more to talk to.
		return nil, toStatus(fmt.Errorf("%w: call %q is no longer running on the gateway", ErrCallEnded, id))
	}
	return v.(Call), nil
}

func (h *hostServer) CallTool(ctx context.Context, req *pb.HostCallToolRequest) (*pb.HostCallToolResponse, error) {
	call, err := h.call(req.CallId)
	if err != nil {
		return nil, err
	}
	res, err := resultToPB(call.CallTool(ctx, req.Name, req.Arguments))
	if err != nil {
		return nil, err
	}
	return &pb.HostCallToolResponse{Result: res}, nil
}

func (h *hostServer) ClientRequest(ctx context.Context, req *pb.ClientRequestRequest) (*pb.ClientRequestResponse, error) {
	call, err := h.call(req.CallId)
	if err != nil {
		return nil, err
	}
	res, err := resultToPB(call.Request(ctx, req.Method, req.Params))
	if err != nil {
		return nil, err
	}
	return &pb.ClientRequestResponse{Result: res}, nil
}

func (h *hostServer) Log(ctx context.Context, req *pb.LogRequest) (*pb.LogResponse, error) {
	if h.c.host == nil {
		return &pb.LogResponse{}, nil
	}
	if err := h.c.host.Log(ctx, req.Level, req.Message, req.Attrs); err != nil {
		return nil, toStatus(err)
	}
	return &pb.LogResponse{}, nil
}
