package toolspec

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every error about the content of a tool.yaml or
// a Spec.
var ErrInvalid = errors.New("invalid tool definition")

// Problem is one thing wrong with a tool definition.
type Problem struct {
	// File is the tool.yaml's name as given to Parse; empty for a Spec.
	File string `json:"file,omitempty"`
	// Line and Col are 1-based; zero when unknown (a Spec decoded from JSON).
	Line int `json:"line,omitempty"`
	Col  int `json:"col,omitempty"`
	// Field is the path of the key, such as "sandbox.mounts[0].path".
	Field string `json:"field,omitempty"`
	// Msg says what is wrong and what to do about it.
	Msg string `json:"msg"`
}

// String returns "file:line:col: field: msg", leaving out what is unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error lists every problem found in one tool definition. It wraps ErrInvalid.
type Error struct {
	Problems []Problem
}

// Error returns the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }
