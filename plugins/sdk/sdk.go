package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ProtocolVersion is the newest executor protocol version this SDK speaks,
// and MinProtocolVersion the oldest. A plugin built with this SDK serves
// every version in between; the go-plugin handshake picks the newest one
// both sides know, so gateways and executors built against different SDK
// releases keep working together.
//
// History:
//
//	1: Info, Load, Unload, Call (server-streamed events), Watch;
//	   host callbacks CallTool, ClientRequest, Log over the go-plugin broker.
//	2: Calls, one bidirectional stream that multiplexes every call (and its
//	   cancellation) instead of a stream per call. Nothing else changed:
//	   an Executor implementation is the same Go code for both.
//	3: the executor may offer a side channel for the calls in its Info
//	   answer, a local socket (a Linux abstract socket, opened with a
//	   one-time token) that carries the Calls stream's messages with a
//	   4-byte length prefix each instead of gRPC's HTTP/2 framing. The
//	   host falls back to the Calls stream when it cannot connect. Again
//	   an Executor implementation does not change.
const (
	ProtocolVersion    = 3
	MinProtocolVersion = 1
)

// Info describes an executor.
type Info struct {
	// Name identifies the executor, e.g. "mcp" or "hello".
	Name string
	// Version is the executor's own version.
	Version string
	// Kinds lists the spec kinds the executor loads, e.g. ["mcp"]. The
	// first one is the kind of the source the gateway loads for a plugin
	// found in a plugins dir.
	Kinds []string
}

// maxKind is the longest valid kind, in bytes.
const maxKind = 64

// Validate reports what is wrong with an Info answer; the gateway refuses
// to start an executor whose Info does not validate, and sdktest.Start
// fails the test. Name must not be empty, and Kinds must list at least one
// kind, each of 1 to 64 letters, digits, '-' or '_', none twice.
func (i Info) Validate() error {
	var errs []error
	if strings.TrimSpace(i.Name) == "" {
		errs = append(errs, errors.New("Info.Name is empty; name the executor, e.g. \"hello\""))
	}
	if len(i.Kinds) == 0 {
		errs = append(errs, errors.New("Info.Kinds is empty; list the spec kinds the executor loads, e.g. []string{\"hello\"}"))
	}
	seen := make(map[string]bool, len(i.Kinds))
	for _, k := range i.Kinds {
		switch {
		case !validKind(k):
			errs = append(errs, fmt.Errorf("Info.Kinds: %q is not a valid kind; use 1 to %d letters, digits, '-' or '_'", k, maxKind))
		case seen[k]:
			errs = append(errs, fmt.Errorf("Info.Kinds: %q is listed twice", k))
		}
		seen[k] = true
	}
	return errors.Join(errs...)
}

func validKind(k string) bool {
	if k == "" || len(k) > maxKind {
		return false
	}
	for _, c := range []byte(k) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// LoadRequest asks an executor to load a source.
type LoadRequest struct {
	// Source is the id the gateway uses for this source (a server name,
	// a tool folder's name). It is unique per executor.
	Source string
	// Kind is one of the executor's Info.Kinds.
	Kind string
	// Spec is the source's configuration as JSON; its shape is the kind's.
	Spec json.RawMessage
}

// Definitions is everything a source offers, each item one MCP JSON object
// exactly as MCP defines it (a Tool, a Resource, a ResourceTemplate, a Prompt).
// Names are the source's own; the gateway namespaces them.
type Definitions struct {
	// Tools are MCP Tool objects; check them with ValidateTools.
	Tools []json.RawMessage
	// Resources are MCP Resource objects.
	Resources []json.RawMessage
	// ResourceTemplates are MCP ResourceTemplate objects.
	ResourceTemplates []json.RawMessage
	// Prompts are MCP Prompt objects.
	Prompts []json.RawMessage
	// Server is the upstream's initialize result, where there is one.
	Server json.RawMessage
	// Status, when not nil, is the source's health as of these definitions.
	Status *Status
}

// CallRequest is one MCP request routed to a source.
type CallRequest struct {
	// Source names a loaded source.
	Source string
	// Method is the MCP method: tools/call, resources/read, prompts/get,
	// completion/complete, resources/subscribe, ...
	Method string
	// Params is the request's params object, with names already mapped back
	// to the source's own and the progress token removed.
	Params json.RawMessage
	// CallID identifies the call to the host's callbacks.
	CallID string
	// Client is an opaque key for the client connection the call came
	// from: calls with the same non-empty key come from one client (one
	// MCP session, or the client of a stdio front end). Empty means
	// unknown: treat the call as a client of its own. An executor that
	// cannot tie a server request or a notification of its upstream to the
	// call that caused it (a stdio server shared by every client) can use
	// it to avoid handing one client's traffic to another.
	Client string
}

// Progress is a progress report for a running call.
type Progress struct {
	// Progress is how far the call has come; it must increase from one
	// report to the next, and may be a fraction or a count.
	Progress float64
	// Total is the value Progress reaches when the call is done; 0 when
	// unknown.
	Total float64
	// Message, when not empty, says what the call is doing.
	Message string
}

// Notification is an MCP notification (method and params object).
type Notification struct {
	// Method is the notification's MCP method, e.g.
	// "notifications/message" or "notifications/resources/updated".
	Method string
	// Params is the notification's params object, passed on unchanged.
	Params json.RawMessage
}

// Source states reported in Status.State.
const (
	StateStarting   = "starting"
	StateReady      = "ready"
	StateFailed     = "failed"
	StateRestarting = "restarting"
	StateStopped    = "stopped"
)

// Status is the health of a source.
type Status struct {
	// State is one of StateStarting, StateReady, StateFailed,
	// StateRestarting, StateStopped.
	State string
	// PID is the process id of what serves the source (an upstream
	// server the executor started), or 0 when there is none.
	PID int
	// Restarts counts how often the executor restarted the source since
	// it was loaded.
	Restarts int
	// LastError is the last failure of the source, for people to read;
	// empty when there was none.
	LastError string
}

// Change is something that happened to a source outside any call.
type Change struct {
	// Source is the id of the source that changed (LoadRequest.Source).
	Source string
	// Definitions, when not nil, is the full new set of the source's definitions.
	Definitions *Definitions
	// Notification, when not nil, is a source-level notification for
	// subscribed clients (e.g. notifications/resources/updated).
	Notification *Notification
	// Status, when not nil, is the source's new health.
	Status *Status
}

// Executor is what a plugin implements and what the gateway calls.
//
// The gateway calls Info once, first; then Load, Unload and Call in any
// order. Calls (for the same or different sources) run concurrently, and
// Load/Unload may run while calls are in flight, so implementations must be
// safe for concurrent use. Every method receives the request's context:
// cancellation of a Call's context means the client cancelled it.
//
// Served by the SDK, a panic in Info, Load, Unload or Call fails that one
// request with an error naming it (the tool, for a tools/call) and the
// panic value, and its stack goes to stderr, which the gateway logs; the
// process keeps serving its other calls. Release locks with defer so that
// a panic leaves none held. A panic in Watch or in a goroutine of yours
// still ends the process, and the gateway restarts it.
type Executor interface {
	// Info describes the executor.
	Info(ctx context.Context) (Info, error)
	// Load loads (or reloads) a source and returns its definitions.
	// A bad spec should yield an error wrapping ErrInvalidSpec that says
	// what is wrong.
	Load(ctx context.Context, req LoadRequest) (Definitions, error)
	// Unload releases a source and everything it started.
	Unload(ctx context.Context, source string) error
	// Call runs one request. It reports progress and notifications through
	// call while it runs and returns the JSON result. An error that is an
	// *RPCError reaches the client as that JSON-RPC error; other errors
	// become internal errors.
	Call(ctx context.Context, req CallRequest, call Call) (json.RawMessage, error)
}

// Call is the host's side of one running call, handed to Executor.Call.
// Its methods are safe for concurrent use. They work until Call returns;
// from then on each of them returns an error wrapping ErrCallEnded, and
// nothing more reaches the client. A Request or CallTool that reaches the
// gateway after it stopped waiting for the call (the client cancelled, a
// timeout) fails the same way.
type Call interface {
	// Progress reports progress to the client, if it asked for progress.
	Progress(p Progress) error
	// Notify forwards a notification (e.g. notifications/message) to the
	// client of this call.
	Notify(n Notification) error
	// Request sends a server-to-client request (sampling/createMessage,
	// elicitation/create, roots/list) to the client of this call and
	// returns its result; a JSON-RPC error answer is an *RPCError.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// CallTool calls a tool of the gateway's catalog, by its exposed name
	// (`skillgate tools list`), on behalf of this call and returns the
	// CallToolResult JSON. A name that is not in the catalog is an
	// *RPCError with CodeInvalidParams; a tool that failed is a result
	// with "isError": true, not an error.
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// Watcher is implemented by executors whose sources change on their own
// (upstream list_changed, file edits, health). Watch blocks, sending changes
// to emit, until ctx is done. The gateway calls it once after Info.
type Watcher interface {
	// Watch sends the sources' changes to emit, from any goroutine, until
	// ctx is done, and then returns nil; emit must not be called after it
	// returned.
	Watch(ctx context.Context, emit func(Change)) error
}

// Host is the gateway's side for executor-wide services.
type Host interface {
	// Log writes into the gateway's structured log. Level is one of
	// debug, info, warn, error. Once the gateway has closed its side of
	// the connection (it does so before it has Shutdown called, or it is
	// gone), the SDK's Host writes the record to the process's stderr
	// instead, as a JSON line that the gateway, which reads stderr until
	// the process exits, logs with the same level, message and
	// attributes; Log then returns nil.
	Log(ctx context.Context, level, msg string, attrs map[string]string) error
}

// HostUser is implemented by executors that want the Host. SetHost is called
// once, right before the first Info.
type HostUser interface {
	// SetHost hands the executor the gateway's Host, once, before Info.
	SetHost(h Host)
}

// Shutdowner is implemented by executors that must stop what they started
// (child processes, connections, temporary files) before their process
// ends. Serve calls Shutdown once, when the process is about to end for
// one of these reasons:
//
//   - the gateway stopped the plugin: Serve calls it before it returns;
//   - the process got SIGTERM;
//   - its stdin, a pipe from the gateway, closed: the gateway is gone
//     (see EnvExitOnStdinEOF).
//
// In the last two cases the process exits with status 0 once Shutdown
// returned, and calls may still be running while it does (they should
// fail rather than start anything new). ctx's deadline is what is left of
// the gateway's kill window (EnvKillWindow) less a reserve for exiting;
// Shutdown should return by then, and Serve waits no longer than the
// window itself. Its error is logged.
//
// What Shutdown writes to os.Stderr reaches the gateway's log, as long
// as the gateway still reads the process's stderr (until the process
// exits, unless the gateway itself is gone): Serve points os.Stdout and
// os.Stderr back at the process's own before it calls Shutdown (see
// Serve). Stdout is not read. The Host works during Shutdown: Host.Log
// reaches the gateway's log, through stderr once the gateway closed the
// connection. The callbacks of a call still running (Call.Request,
// CallTool) need the connection, and fail once it is gone.
//
// An executor that does not implement Shutdowner keeps the behaviour
// older SDKs had: SIGTERM ends the process at once, and so does stdin EOF
// under EnvExitOnStdinEOF.
type Shutdowner interface {
	// Shutdown stops what the executor started, returning by ctx's
	// deadline; its error is logged.
	Shutdown(ctx context.Context) error
}
