package frontend

import "errors"

// Sentinel errors.
var (
	// ErrNoClientCall means a server-to-client request came without a client
	// session able to answer it.
	ErrNoClientCall = errors.New("no client session can answer this request")
	// ErrStdoutClosed means the stdio client stopped reading: writing to
	// its end of stdout failed (a broken pipe). ServeStdio then ends as it
	// does when stdin closes, and returns it wrapped.
	ErrStdoutClosed = errors.New("the client closed stdout")
	// ErrUnknownTool means a tool name is not in the catalog.
	ErrUnknownTool = errors.New("unknown tool")
)
