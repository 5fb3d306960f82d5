package gateway

import (
	"errors"

	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Sentinel errors.
var (
	// ErrUnknownExecutor means a source names an executor that is neither
	// built in nor found in a plugins dir.
	ErrUnknownExecutor = errors.New("unknown executor")
	// ErrClosed means the gateway was closed.
	ErrClosed = errors.New("gateway closed")
	// ErrUnknownProfile means a profile was asked for that the config lacks.
	ErrUnknownProfile = errors.New("unknown profile")
)

// unknownToolError is the error of a call of a tool the catalog lacks: the
// JSON-RPC error it is for clients and executors (errors.As finds the
// *sdk.RPCError, which crosses the plugin boundary as it is), reading as
// its message and matching frontend.ErrUnknownTool.
type unknownToolError struct{ rpc *sdk.RPCError }

func (e *unknownToolError) Error() string   { return e.rpc.Message }
func (e *unknownToolError) Unwrap() []error { return []error{e.rpc, frontend.ErrUnknownTool} }
