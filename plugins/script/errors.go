package script

import "errors"

// The executor reports failures with the SDK's sentinel errors
// (sdk.ErrInvalidSpec, sdk.ErrUnknownSource, sdk.ErrUnsupported,
// sdk.ErrUnavailable). A failing tool is not an error: its call returns a
// CallToolResult with isError set. These are its own, internal ones.
var (
	// errProcessGone means a persistent process ended while a call waited.
	errProcessGone = errors.New("the tool's process ended")
)
