package frontend

import "errors"

// Sentinel errors.
var (
	// ErrNoClientCall means a server-to-client request came without a client
	// session able to answer it.
	ErrNoClientCall = errors.New("no client session can answer this request")
	// ErrUnknownTool means a tool name is not in the catalog.
	ErrUnknownTool = errors.New("unknown tool")
)
