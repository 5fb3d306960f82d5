package sdk

import (
	"context"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillgate/skillgate/plugins/sdk/internal/link"
	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// grpcPlugin adapts an Executor to go-plugin. The plugin side sets impl;
// the gateway side sets host (it may be nil) and receives a *client from
// Dispense (package hostside wraps it).
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Executor
	host Host
	// version is the protocol version this plugin set stands for in the
	// handshake (0 means 1). From 2 on, every call rides one Calls
	// stream; from 3 on, a side channel when the plugin offers one. The
	// plugin side serves versions 1 and 2 whatever this says, and offers
	// the side channel only from 3 on.
	version int
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

func init() {
	link.NewPlugin = func(impl, host any, version int) plugin.GRPCPlugin {
		e, _ := impl.(Executor)
		h, _ := host.(Host)
		return &grpcPlugin{impl: e, host: h, version: version}
	}
}

// GRPCServer registers the executor service (plugin side).
func (p *grpcPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterExecutorServer(s, &grpcServer{impl: p.impl, broker: broker, version: p.version})
	return nil
}

// GRPCClient returns a *client talking to the plugin (gateway side). It also
// starts the host callback service on the broker.
func (p *grpcPlugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return newClient(broker, conn, p.host, max(p.version, 1)), nil
}

// versionedPlugins returns the plugin sets of every protocol version this
// SDK speaks: the handshake settles on the newest version both ends know.
func versionedPlugins(impl Executor, host Host) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, ProtocolVersion-MinProtocolVersion+1)
	for v := MinProtocolVersion; v <= ProtocolVersion; v++ {
		sets[v] = plugin.PluginSet{link.PluginName: &grpcPlugin{impl: impl, host: host, version: v}}
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
		HandshakeConfig:  link.Handshake(ProtocolVersion),
		VersionedPlugins: versionedPlugins(impl, nil),
		GRPCServer:       link.NewGRPCServer,
		Logger:           log,
	})
	stop.run(hclog.Info, "the gateway stopped the executor")
}

// EnvExitOnStdinEOF, set to "1" by the gateway, makes Serve exit when its
// stdin (a pipe from the gateway) closes: a gateway that was killed cannot
// ask its plugins to stop, but its end of the pipe always closes. An
// executor that is a Shutdowner is shut down first.
const EnvExitOnStdinEOF = "SKILLGATE_EXIT_ON_STDIN_EOF"
