package sdk

import (
	"context"
	"io"
	"os"
	"runtime"

	"github.com/hashicorp/go-hclog"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// GRPCPlugin adapts an Executor to go-plugin. The plugin side sets Impl; the
// gateway side sets Host (it may be nil) and receives a *Client from
// Dispense.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the executor served by a plugin process.
	Impl Executor
	// Host serves executor-wide callbacks on the gateway side.
	Host Host
	// Version is the protocol version this plugin set stands for in the
	// handshake (0 means 1). From 2 on, every call rides one Calls
	// stream; from 3 on, a side channel when the plugin offers one. The
	// plugin side serves versions 1 and 2 whatever this says, and offers
	// the side channel only from 3 on.
	Version int
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the executor service (plugin side).
func (p *GRPCPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterExecutorServer(s, &grpcServer{impl: p.Impl, broker: broker, version: p.Version})
	return nil
}

// GRPCClient returns a *Client talking to the plugin (gateway side). It also
// starts the host callback service on the broker.
func (p *GRPCPlugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return newClient(broker, conn, p.Host, max(p.Version, 1)), nil
}

// PluginSet returns the go-plugin plugin set for an executor at the newest
// protocol version: what a single-version plugin.ClientConfig.Plugins or
// plugin.ServeConfig.Plugins needs (impl nil on the gateway side), and what
// an in-memory connection such as plugin.TestPluginGRPCConn takes.
func PluginSet(impl Executor, host Host) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl, Host: host, Version: ProtocolVersion}}
}

// VersionedPlugins returns the plugin sets of every protocol version this
// SDK speaks, for plugin.ClientConfig.VersionedPlugins (gateway side) and
// plugin.ServeConfig.VersionedPlugins (plugin side): the handshake then
// settles on the newest version both ends know.
func VersionedPlugins(impl Executor, host Host) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, ProtocolVersion-MinProtocolVersion+1)
	for v := MinProtocolVersion; v <= ProtocolVersion; v++ {
		sets[v] = plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl, Host: host, Version: v}}
	}
	return sets
}

// Serve serves impl as an executor plugin over stdin/stdout as go-plugin
// expects, and returns when the gateway closes the plugin. A plugin's main
// is usually just:
//
//	func main() { sdk.Serve(myExecutor{}) }
//
// If impl is a Shutdowner, Serve calls its Shutdown before it returns, and
// before the process exits on SIGTERM or on stdin EOF (EnvExitOnStdinEOF).
// SIGINT is ignored (go-plugin's choice): a Ctrl-C in the gateway's
// terminal is the gateway's to handle, and it stops its plugins in order.
func Serve(impl Executor) {
	log := hclog.New(&hclog.LoggerOptions{
		Name: "executor", Level: hclog.Info, Output: os.Stderr, JSONFormat: true,
	})
	stop := newShutdown(impl, log)
	stop.handleSignals()
	if os.Getenv(EnvExitOnStdinEOF) == "1" {
		go func() {
			_, _ = io.Copy(io.Discard, pollableStdin())
			stop.run(hclog.Warn, "the gateway is gone (its pipe on stdin closed)")
			os.Exit(0)
		}()
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: VersionedPlugins(impl, nil),
		GRPCServer:       NewGRPCServer,
		Logger:           log,
	})
	stop.run(hclog.Info, "the gateway stopped the executor")
}

// EnvExitOnStdinEOF, set to "1" by the gateway, makes Serve exit when its
// stdin (a pipe from the gateway) closes: a gateway that was killed cannot
// ask its plugins to stop, but its end of the pipe always closes. An
// executor that is a Shutdowner is shut down first.
const EnvExitOnStdinEOF = "SKILLGATE_EXIT_ON_STDIN_EOF"

// MaxMessageSize is the largest message either side accepts: arguments,
// specs and results of up to this size cross the boundary.
const MaxMessageSize = 64 << 20

// StreamWindow and ConnWindow are the fixed HTTP/2 flow-control windows
// (per stream and per connection) of the link between host and executor.
// Fixed windows turn off gRPC's bandwidth-delay estimation, which probes
// with a ping for nearly every small message: a local pipe has no
// bandwidth to discover, and each probe costs both processes a write, a
// read and a wake-up.
const (
	StreamWindow = 1 << 20
	ConnWindow   = 4 << 20
)

// NewGRPCServer builds the gRPC server an executor (and the host's callback
// service) is served with. A pool of stream workers avoids a new goroutine,
// and its stack growth, per call; a call holds its worker for the whole
// upstream round trip, so the pool is sized for many calls in flight rather
// than for the CPUs.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts,
		grpc.NumStreamWorkers(uint32(max(64, 16*runtime.GOMAXPROCS(0)))),
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.InitialWindowSize(StreamWindow),
		grpc.InitialConnWindowSize(ConnWindow),
	)
	return grpc.NewServer(opts...)
}
