package config

import "errors"

var (
	// ErrUndefinedVariable is wrapped by the error for a ${VAR} that is not set
	// and has no default.
	ErrUndefinedVariable = errors.New("undefined variable")
	// ErrNameClash is wrapped by Merge's error for a server already in the file.
	ErrNameClash = errors.New("server already defined")
	// ErrUnknownFormat is returned by Import for a file without an
	// mcpServers or servers object.
	ErrUnknownFormat = errors.New("not an MCP client config")
)

// Error is one problem in a config file. Parse and Validate return every
// problem at once, joined with errors.Join; use errors.As on each to read it.
type Error struct {
	// Pos is where the problem is.
	Pos Pos
	// Field is the path of the field, such as "servers.everything.command".
	Field string
	// Msg says what is wrong and what to do about it.
	Msg string
	// Err is a sentinel such as ErrUndefinedVariable, or nil.
	Err error
}

// Error returns "file:line:col: field: msg".
func (e *Error) Error() string {
	s := e.Msg
	if e.Field != "" {
		s = e.Field + ": " + s
	}
	if p := e.Pos.String(); p != "" {
		s = p + ": " + s
	}
	return s
}

// Unwrap returns the sentinel, if any.
func (e *Error) Unwrap() error { return e.Err }
