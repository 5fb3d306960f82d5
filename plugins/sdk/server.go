package sdk

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// grpcServer serves an Executor on the plugin side.
type grpcServer struct {
	pb.UnimplementedExecutorServer
	impl   Executor
	broker *plugin.GRPCBroker

	mu      sync.Mutex
	conn    *grpc.ClientConn
	host    pb.HostClient
	hostSet bool
}

func (s *grpcServer) hostClient() pb.HostClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

func (s *grpcServer) Info(ctx context.Context, req *pb.InfoRequest) (*pb.InfoResponse, error) {
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
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.InfoResponse{Name: info.Name, Version: info.Version, Kinds: info.Kinds}, nil
}

func (s *grpcServer) Load(ctx context.Context, req *pb.LoadRequest) (*pb.LoadResponse, error) {
	defs, err := s.impl.Load(ctx, LoadRequest{Source: req.Source, Kind: req.Kind, Spec: req.Spec})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.LoadResponse{Definitions: defsToPB(&defs)}, nil
}

func (s *grpcServer) Unload(ctx context.Context, req *pb.UnloadRequest) (*pb.UnloadResponse, error) {
	if err := s.impl.Unload(ctx, req.Source); err != nil {
		return nil, toStatus(err)
	}
	return &pb.UnloadResponse{}, nil
}

func (s *grpcServer) Call(req *pb.CallRequest, stream pb.Executor_CallServer) error {
	call := &streamCall{stream: stream, host: s.hostClient(), callID: req.CallId}
	res, err := s.impl.Call(stream.Context(), CallRequest{
		Source: req.Source, Method: req.Method, Params: req.Params, CallID: req.CallId,
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
	stream pb.Executor_CallServer
	host   pb.HostClient
	callID string

	mu   sync.Mutex
	done bool
}

var _ Call = (*streamCall)(nil)

func (c *streamCall) send(ev *pb.CallEvent) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	return c.stream.Send(ev)
}

func (c *streamCall) Progress(p Progress) error {
	return c.send(&pb.CallEvent{Event: &pb.CallEvent_Progress{Progress: &pb.Progress{
		Progress: p.Progress, Total: p.Total, Message: p.Message,
	}}})
}

func (c *streamCall) Notify(n Notification) error {
	return c.send(&pb.CallEvent{Event: &pb.CallEvent_Notification{Notification: notificationToPB(&n)}})
}

func (c *streamCall) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if c.host == nil {
		return nil, ErrUnsupported
	}
	resp, err := c.host.ClientRequest(ctx, &pb.ClientRequestRequest{CallId: c.callID, Method: method, Params: params})
	if err != nil {
		return nil, fromStatus(ctx, err)
	}
	return resultFromPB(resp.Result)
}

func (c *streamCall) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if c.host == nil {
		return nil, ErrUnsupported
	}
	resp, err := c.host.CallTool(ctx, &pb.HostCallToolRequest{CallId: c.callID, Name: name, Arguments: args})
	if err != nil {
		return nil, fromStatus(ctx, err)
	}
	return resultFromPB(resp.Result)
}

// remoteHost is the plugin side's Host.
type remoteHost struct{ client pb.HostClient }

func (h remoteHost) Log(ctx context.Context, level, msg string, attrs map[string]string) error {
	_, err := h.client.Log(ctx, &pb.LogRequest{Level: level, Message: msg, Attrs: attrs})
	return fromStatus(ctx, err)
}
