package toolstore

import "errors"

// Sentinel errors of the store. Validation problems of a tool.yaml are
// *toolspec.Error values (which wrap toolspec.ErrInvalid).
var (
	// ErrExists means Register was asked for a name that has a live folder.
	ErrExists = errors.New("tool already exists")
	// ErrNotFound means the tool (or the version) does not exist.
	ErrNotFound = errors.New("tool not found")
	// ErrBadInput means a name, a file name or a file is not acceptable.
	ErrBadInput = errors.New("invalid input")
)
