package pipelines

import (
	"errors"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/pos"
)

var (
	// ErrRecursion is wrapped by the *ChainError of a tool call that would
	// call a tool already on the call chain (a pipeline calling itself,
	// directly or through others).
	ErrRecursion = errors.New("recursive tool call")
	// ErrTooDeep is wrapped by the *ChainError of a tool call nested deeper
	// than the allowed depth.
	ErrTooDeep = errors.New("tool calls nested too deeply")
	// ErrBudget is wrapped by the error of an expression that used more
	// memory, iterations or string length than its budget allows.
	ErrBudget = errors.New("expression budget exceeded")
	// ErrInvalidArguments is wrapped by the error of a run whose arguments
	// do not fit the pipeline's inputs schema.
	ErrInvalidArguments = errors.New("invalid arguments")
)

// Pos is a place in a pipeline file. Line and Col count from 1; zero means
// unknown.
type Pos = pos.Pos

// Error is one problem in a pipeline definition. Load, Parse and ParseNode
// return every problem at once, joined with errors.Join; use errors.As on
// each to read it.
type Error struct {
	// Pos is where the problem is: for an expression, the place inside it
	// where the problem was found, as near as the YAML quoting allows.
	Pos Pos
	// Field is the path of the field, such as "steps[1].with.text".
	Field string
	// Expr is the offending expression, without its ${{ }}, or "".
	Expr string
	// Msg says what is wrong and what to do about it.
	Msg string
	// Pipeline names the pipeline the problem is about, when the loader
	// knows it (a YAML syntax error of a file may stop it from knowing).
	Pipeline string
	// Warning marks a finding that does not hold the pipeline back, such
	// as an argument a tool's input schema does not list. Warnings are
	// found in Pipeline.Warnings, never in the error of Load.
	Warning bool
}

// Error returns "file:line:col: field: msg" ("file:line:col: warning:
// field: msg" for a warning), followed by the expression when there is
// one.
func (e *Error) Error() string {
	var b strings.Builder
	if p := e.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	if e.Warning {
		b.WriteString("warning: ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Expr != "" {
		b.WriteString(" in ${{ ")
		b.WriteString(e.Expr)
		b.WriteString(" }}")
	}
	return b.String()
}

// ChainError is the error of a tool call refused by the call-chain guard.
type ChainError struct {
	// Chain is the call chain before the refused call, outermost first.
	Chain []string
	// Tool is the tool that was to be called.
	Tool string
	// Max is the allowed depth.
	Max int
	// Err is ErrRecursion or ErrTooDeep.
	Err error
}

// Error names the refused tool and the whole chain.
func (e *ChainError) Error() string {
	chain := strings.Join(append(append([]string(nil), e.Chain...), e.Tool), " -> ")
	if errors.Is(e.Err, ErrRecursion) {
		return "refusing to call " + e.Tool + ": it is already running in this call chain (" + chain + "); a pipeline must not call itself"
	}
	return "refusing to call " + e.Tool + ": tool calls are nested more than " + strconv.Itoa(e.Max) + " deep (" + chain + ")"
}

// Unwrap returns ErrRecursion or ErrTooDeep.
func (e *ChainError) Unwrap() error { return e.Err }
