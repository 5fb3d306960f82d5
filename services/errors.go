package services

import "errors"

var (
	// ErrUnknownService is returned for a service name no Spec declares.
	ErrUnknownService = errors.New("unknown service")
	// ErrInvalidSpec is wrapped by New's error for a definition that cannot
	// run safely or at all.
	ErrInvalidSpec = errors.New("invalid service definition")
	// ErrNotRunning is returned by Ensure for a manual service that is not
	// running; the message says how to start it.
	ErrNotRunning = errors.New("service is not running")
	// ErrUnhealthy is wrapped by the error of a service that did not become
	// healthy: it reported unhealthy, exited, or the wait timed out.
	ErrUnhealthy = errors.New("service is not healthy")
	// ErrNoEngine is wrapped when the container engine cannot be reached.
	ErrNoEngine = errors.New("container engine not reachable")
	// ErrNotOwned is returned when an object the manager would use carries a
	// name it wants but not its labels: the manager never touches it.
	ErrNotOwned = errors.New("object exists but skillgate did not create it")
	// ErrClosed is returned by a manager after Close or HandOver, also to
	// callers that were waiting on a start it ended.
	ErrClosed = errors.New("service manager closed")

	// ErrNotFound is wrapped by an Engine's error for a missing object.
	ErrNotFound = errors.New("not found")
	// ErrConflict is wrapped by an Engine's error for a name already in use.
	ErrConflict = errors.New("name already in use")
)
