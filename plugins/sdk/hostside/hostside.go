// Package hostside is the gateway's end of the executor contract: it
// launches nothing itself, but gives whoever starts an executor plugin
// (the gateway's plugin host, or a test) the go-plugin handshake and plugin
// sets, and a [Client] that calls the executor.
//
// Executor authors do not use this package: they implement sdk.Executor,
// call sdk.Serve, and test with package sdktest. It lives in the SDK module
// so that both ends of the connection come from one source and one
// version. It is for the gateway's side only, and is not covered by the
// SDK's compatibility promise ("What the SDK promises" in
// docs/EXECUTORS.md covers packages sdk and sdktest): its API hands out
// go-plugin and gRPC types, and may change with them in any release.
//
//	gp := plugin.NewClient(&plugin.ClientConfig{
//		HandshakeConfig:  hostside.Handshake(),
//		VersionedPlugins: hostside.VersionedPlugins(nil, myHost),
//		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
//		Cmd:              exec.Command("./executor-hello"),
//	})
//	rpc, _ := gp.Client()
//	raw, _ := rpc.Dispense(hostside.PluginName)
//	exec := raw.(*hostside.Client)
//	info, err := exec.Info(ctx)
package hostside

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/internal/link"
)

// PluginName is the name under which an executor is dispensed.
const PluginName = link.PluginName

// MaxMessageSize (64 MiB) is the largest message either side accepts:
// arguments, specs and results of up to this size cross the boundary. A
// client's dial options should allow it (grpc.MaxCallRecvMsgSize and
// grpc.MaxCallSendMsgSize).
const MaxMessageSize = link.MaxMessageSize

// StreamWindow (1 MiB) and ConnWindow (4 MiB) are the fixed HTTP/2
// flow-control windows (per stream and per connection) that the
// executor's server uses; a client should dial with the same
// (grpc.WithInitialWindowSize and grpc.WithInitialConnWindowSize), which
// turns off gRPC's bandwidth-delay probing on a link whose bandwidth
// never changes.
const (
	StreamWindow = link.StreamWindow
	ConnWindow   = link.ConnWindow
)

// Handshake returns the go-plugin handshake shared by the gateway and
// every executor, at sdk.ProtocolVersion. The magic cookie only keeps
// people from running a plugin binary by hand; it is not a security
// control.
func Handshake() plugin.HandshakeConfig { return link.Handshake(sdk.ProtocolVersion) }

// NewGRPCServer builds the gRPC server an executor is served with, for
// plugin.ServeConfig.GRPCServer; sdk.Serve uses it, and so does the
// gateway's callback service.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server { return link.NewGRPCServer(opts) }

// PluginSet returns the go-plugin plugin set of one protocol version (from
// sdk.MinProtocolVersion to sdk.ProtocolVersion; 0 means the newest): what
// a single-version plugin.ClientConfig.Plugins or plugin.ServeConfig.Plugins
// needs, and what an in-memory connection such as
// plugin.TestPluginGRPCConn takes. impl is the executor a plugin serves
// (nil on the gateway side); host serves the executor-wide callbacks on the
// gateway side (it may be nil). Dispense returns a *Client.
func PluginSet(impl sdk.Executor, host sdk.Host, version int) plugin.PluginSet {
	if version == 0 {
		version = sdk.ProtocolVersion
	}
	return plugin.PluginSet{PluginName: newPlugin(impl, host, version)}
}

// VersionedPlugins returns the plugin sets of every protocol version this
// SDK speaks, for plugin.ClientConfig.VersionedPlugins (gateway side) and
// plugin.ServeConfig.VersionedPlugins (plugin side): the handshake then
// settles on the newest version both ends know. impl and host are as for
// PluginSet.
func VersionedPlugins(impl sdk.Executor, host sdk.Host) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, sdk.ProtocolVersion-sdk.MinProtocolVersion+1)
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		sets[v] = PluginSet(impl, host, v)
	}
	return sets
}

// newPlugin wraps package sdk's plugin so that Dispense returns a *Client.
func newPlugin(impl sdk.Executor, host sdk.Host, version int) *grpcPlugin {
	// A nil interface must stay nil on the other side of the any.
	var i, h any
	if impl != nil {
		i = impl
	}
	if host != nil {
		h = host
	}
	return &grpcPlugin{inner: link.NewPlugin(i, h, version)}
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	inner plugin.GRPCPlugin
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

func (p *grpcPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	return p.inner.GRPCServer(broker, s)
}

func (p *grpcPlugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	raw, err := p.inner.GRPCClient(ctx, broker, conn)
	if err != nil {
		return nil, err
	}
	c, ok := raw.(executorConn)
	if !ok {
		return nil, fmt.Errorf("executor plugin client is a %T, not an executor client", raw)
	}
	return &Client{c: c}, nil
}

// executorConn is what package sdk's client offers.
type executorConn interface {
	sdk.Executor
	sdk.Watcher
	CallsChannel() (string, error)
	Version() int
	Close() error
}

// Client is the gateway's side of an executor plugin, what Dispense
// returns for PluginName. It implements sdk.Executor and sdk.Watcher by
// calling the plugin, and serves the plugin's callbacks (CallTool,
// Request) by routing them to the sdk.Call that the running request was
// given. Its methods are safe for concurrent use.
type Client struct {
	c executorConn
}

var (
	_ sdk.Executor = (*Client)(nil)
	_ sdk.Watcher  = (*Client)(nil)
)

// Info implements sdk.Executor. It also hands the plugin the host service,
// and opens the calls side channel when the executor offers one.
func (c *Client) Info(ctx context.Context) (sdk.Info, error) { return c.c.Info(ctx) }

// Load implements sdk.Executor.
func (c *Client) Load(ctx context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	return c.c.Load(ctx, req)
}

// Unload implements sdk.Executor.
func (c *Client) Unload(ctx context.Context, source string) error { return c.c.Unload(ctx, source) }

// Call implements sdk.Executor. Events from the plugin are delivered to
// call in the order the plugin sent them, before Call returns. call may be
// nil: the events are dropped then, and the plugin's callbacks (Request,
// CallTool) fail with sdk.ErrCallEnded, as they do once Call returned.
func (c *Client) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	return c.c.Call(ctx, req, call)
}

// Watch implements sdk.Watcher. It returns nil when ctx is done and an
// error wrapping sdk.ErrPluginShutdown when the plugin goes away.
func (c *Client) Watch(ctx context.Context, emit func(sdk.Change)) error { return c.c.Watch(ctx, emit) }

// CallsChannel says what the next call rides on: "socket" (the executor's
// side channel, protocol 3) or "stream" (a gRPC stream); err is why a side
// channel the executor offered could not be opened.
func (c *Client) CallsChannel() (channel string, err error) { return c.c.CallsChannel() }

// Version is the executor protocol version negotiated with the plugin.
func (c *Client) Version() int { return c.c.Version() }

// Close stops the host callback service and ends the calls stream. The
// plugin process itself is owned by whoever started it.
func (c *Client) Close() error { return c.c.Close() }
