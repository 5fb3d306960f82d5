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
	// ErrStopping answers, as an internal error (-32603), a stdio request
	// that a stopping gateway refused or cut (see StdioDrain); its message
	// is the one the HTTP front end's cut requests get.
	ErrStopping = errors.New("the gateway is stopping; send the request again")
	// ErrUnknownTool means a tool name is not in the catalog.
	ErrUnknownTool = errors.New("unknown tool")
)
