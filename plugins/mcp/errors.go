package mcp

import "errors"

// The executor reports failures with the SDK's sentinel errors
// (sdk.ErrInvalidSpec, sdk.ErrUnavailable, sdk.ErrUnknownSource,
// sdk.ErrUnsupported) and passes upstream JSON-RPC errors on as
// *sdk.RPCError. These are its own, internal ones.
var (
	// errMisanswer means server/discover got an answer that is not a
	// discover result: the upstream is not a modern server.
	errMisanswer = errors.New("not a server/discover result")
	// errNotObject means params that must be a JSON object are not.
	errNotObject = errors.New("params must be a JSON object")
)
