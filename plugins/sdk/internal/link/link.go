// Package link holds what both ends of the executor connection share, and
// hands package hostside (the gateway's end) the plugin implementation that
// package sdk keeps unexported: sdk sets NewPlugin in its init, so that an
// executor author sees only the executor's side of the SDK.
package link

import (
	"runtime"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// NewPlugin returns the go-plugin plugin of one protocol version. impl is
// the sdk.Executor a plugin process serves (nil on the gateway side) and
// host the sdk.Host the gateway serves (nil on the plugin side); GRPCClient
// returns package sdk's client, which has the methods of hostside.Client.
// Package sdk sets it in its init.
var NewPlugin func(impl, host any, version int) plugin.GRPCPlugin

// PluginName is the name under which an executor is dispensed.
const PluginName = "executor"

// Handshake is the go-plugin handshake of the given protocol version. The
// magic cookie only keeps people from running a plugin binary by hand; it
// is not a security control.
func Handshake(version int) plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  uint(version),
		MagicCookieKey:   "SKILLGATE_EXECUTOR_PLUGIN",
		MagicCookieValue: "8d0a3c1e-skillgate-executor",
	}
}

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
