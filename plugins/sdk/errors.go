package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sentinel errors. They survive the process boundary: an executor returns
// them (possibly wrapped) and the gateway sees errors.Is match on its side.
var (
	// ErrUnknownSource means a Call or Unload named a source that is not loaded.
	ErrUnknownSource = errors.New("unknown source")
	// ErrInvalidSpec means Load was given a spec the executor cannot use.
	ErrInvalidSpec = errors.New("invalid spec")
	// ErrUnsupported means the executor does not offer the requested method or kind.
	ErrUnsupported = errors.New("unsupported")
	// ErrUnavailable means the source exists but cannot serve right now
	// (an upstream is starting, restarting or failed).
	ErrUnavailable = errors.New("source unavailable")
	// ErrPluginShutdown means the executor process went away during the request.
	ErrPluginShutdown = errors.New("executor plugin shut down")
	// ErrCallEnded is what every method of a Call returns once the
	// Executor.Call it was handed to has returned (or the gateway stopped
	// waiting for it): progress and notifications are no longer delivered,
	// and requests and tool calls are refused.
	ErrCallEnded = errors.New("call ended")
)

// JSON-RPC error codes used by the gateway and executors. The gateway
// answers a CallTool of a tool that is not in its catalog with an *RPCError
// of CodeInvalidParams ("unknown tool: NAME ...").
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// RPCError is a JSON-RPC error answered by an upstream or an executor. It is
// passed to the client as it is, code and data included.
type RPCError struct {
	// Code is the JSON-RPC error code, e.g. CodeInvalidParams.
	Code int64 `json:"code"`
	// Message is the error's message, for people to read.
	Message string `json:"message"`
	// Data, when not empty, is the error's data value, passed on
	// unchanged.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message)
}
