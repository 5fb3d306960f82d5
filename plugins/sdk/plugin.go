package sdk

import (
	"context"
	"io"
	"os"
	"sync"

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
	// onInfo, when set, is called at every Info request the plugin side
	// serves (see Serve).
	onInfo func()
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
	pb.RegisterExecutorServer(s, &grpcServer{impl: p.impl, broker: broker, version: p.version, onInfo: p.onInfo})
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
//
// While Serve runs, os.Stdout and os.Stderr are pipes that go-plugin
// relays to the gateway over its connection. Before Shutdown is called,
// and when Serve returns, they are the process's own again: the gateway
// reads the process's stderr until it exits, while the relay ends with the
// connection. (A SIGTERM that comes before the gateway's first request
// leaves them as they are: go-plugin may not have replaced them yet.)
func Serve(impl Executor) {
	std := &stdio{stdout: os.Stdout, stderr: os.Stderr, redirected: make(chan struct{})}
	log := hclog.New(&hclog.LoggerOptions{
		Name: "executor", Level: hclog.Info, Output: std.stderr, JSONFormat: true,
	})
	stop := newShutdown(impl, log, std.restore)
	stop.handleSignals()
	if os.Getenv(EnvExitOnStdinEOF) == "1" {
		go func() {
			_, _ = io.Copy(io.Discard, pollableStdin())
			stop.run(hclog.Warn, "the gateway is gone (its pipe on stdin closed)")
			os.Exit(0)
		}()
	}
	sets := versionedPlugins(impl, nil)
	for _, set := range sets {
		set[link.PluginName].(*grpcPlugin).onInfo = std.markRedirected
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  link.Handshake(ProtocolVersion),
		VersionedPlugins: sets,
		GRPCServer:       link.NewGRPCServer,
		Logger:           log,
	})
	// Nobody reads go-plugin's pipes now that the gateway closed the
	// connection: what is written to them is lost, and once one is full
	// a write blocks for good.
	std.markRedirected()
	if stop == nil {
		std.restore()
	}
	stop.run(hclog.Info, "the gateway stopped the executor")
}

// stdio is the process's own stdout and stderr, which go-plugin's Serve
// replaces with pipes that it relays to the gateway over the connection.
type stdio struct {
	stdout, stderr *os.File
	// redirected is closed once go-plugin has replaced them: the gateway's
	// first request came in, or go-plugin's Serve returned. Both come
	// after the replacement, so that restore cannot race with it.
	redirected chan struct{}
	once       sync.Once
}

func (s *stdio) markRedirected() { s.once.Do(func() { close(s.redirected) }) }

// restore points os.Stdout and os.Stderr back at the process's own, if
// go-plugin has replaced them; before that, go-plugin would replace them
// again after it.
func (s *stdio) restore() {
	select {
	case <-s.redirected:
		os.Stdout, os.Stderr = s.stdout, s.stderr
	default:
	}
}

// EnvExitOnStdinEOF, set to "1" by the gateway, makes Serve exit when its
// stdin (a pipe from the gateway) closes: a gateway that was killed cannot
// ask its plugins to stop, but its end of the pipe always closes. An
// executor that is a Shutdowner is shut down first.
const EnvExitOnStdinEOF = "SKILLGATE_EXIT_ON_STDIN_EOF"
