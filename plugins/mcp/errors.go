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

// ErrSessionLost is in the chain of an error of Load or Call (errors.Is)
// when a remote server no longer knew the session it had given: it
// restarted, expired the session, or (behind a load balancer without
// sticky sessions) another replica answered. A loaded source starts a new
// session at once and sends an unprocessed request again; the error's
// text promises nothing, for a one-shot client does neither.
var ErrSessionLost = errors.New("the server no longer knows the session")

// lostSession marks err as a loss of the session (errors.Is
// ErrSessionLost) without changing its message.
func lostSession(err error) error { return &sessionLostError{err} }

type sessionLostError struct{ err error }

func (e *sessionLostError) Error() string   { return e.err.Error() }
func (e *sessionLostError) Unwrap() []error { return []error{e.err, ErrSessionLost} }

// unsentError is the error of a request the upstream never processed: it
// was not sent, or the server refused it for its session. It is safe to
// send again on a new session.
type unsentError struct{ err error }

func (e *unsentError) Error() string { return e.err.Error() }
func (e *unsentError) Unwrap() error { return e.err }

// resendable reports whether err is that of a request the upstream never
// processed because it had lost the session: one to send again once the
// source has a new session.
func resendable(err error) bool {
	var u *unsentError
	return errors.As(err, &u) && errors.Is(err, ErrSessionLost)
}
