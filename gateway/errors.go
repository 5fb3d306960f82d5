package gateway

import "errors"

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
