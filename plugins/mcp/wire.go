package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// A wire is one live link to an upstream below the MCP protocol: it moves
// JSON-RPC messages and nothing else. stdioWire runs a child process;
// httpWire adapts mcp-go's streamable HTTP and SSE transports.
//
// roundTrip and notify may be called concurrently. The handlers given at
// start are called from the wire's own goroutines: notify handlers in the
// order the upstream sent them (they must not block), request handlers each
// on a goroutine of its own.
type wire interface {
	// roundTrip sends a request and waits for its response, ctx, or the
	// wire's death (then the error wraps the cause). The error of a
	// request the upstream cannot have processed (the wire was dead, or
	// the server refused it for its session) is an *unsentError.
	roundTrip(ctx context.Context, req *rpcRequest) (*rpcResponse, error)
	// notify sends a notification.
	notify(ctx context.Context, method string, params json.RawMessage) error
	// dead is closed once the wire has failed or was closed; cause says why.
	dead() <-chan struct{}
	cause() error
	// pid is the upstream's process id, 0 for remote upstreams.
	pid() int
	// close shuts the link down gracefully and waits until it is down.
	close() error
	// setProtocolVersion tells HTTP transports the version to put in the
	// MCP-Protocol-Version header.
	setProtocolVersion(v string)
}

// death records that a wire failed or was closed, and why: the first cause
// wins. A wire embeds it for dead and cause, and calls mark from its die,
// which does the wire's own work around it.
type death struct {
	ch   chan struct{} // closed on death; made with the wire
	once sync.Once
	err  error
}

func (d *death) dead() <-chan struct{} { return d.ch }

// cause is why the wire died, or nil while it lives.
func (d *death) cause() error {
	select {
	case <-d.ch:
		return d.err
	default:
		return nil
	}
}

// mark records cause and closes the channel if the wire was alive, and
// reports whether it was. A later cause is dropped.
func (d *death) mark(cause error) (first bool) {
	d.once.Do(func() {
		d.err = cause
		close(d.ch)
		first = true
	})
	return first
}

// rpcRequest is an outgoing request. Params is sent as it is.
type rpcRequest struct {
	id     int64
	method string
	params json.RawMessage
	header http.Header
}

// rpcResponse is a response: Result exactly as the upstream sent it, or Err.
type rpcResponse struct {
	result json.RawMessage
	err    *sdk.RPCError
}

// calls are a wire's requests that wait for their answers.
type calls struct {
	mu      sync.Mutex
	waiting map[int64]chan *rpcResponse
	// maxSent is the highest request id sent: an answer to one at or
	// below it that is not waited for is a late one.
	maxSent atomic.Int64
}

// add waits for the answer to id on ch, which must be buffered, until
// remove(id).
func (c *calls) add(id int64, ch chan *rpcResponse) {
	c.mu.Lock()
	if c.waiting == nil {
		c.waiting = map[int64]chan *rpcResponse{}
	}
	c.waiting[id] = ch
	c.maxSent.Store(max(c.maxSent.Load(), id))
	c.mu.Unlock()
}

func (c *calls) remove(id int64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// deliver hands resp to the request id, at most once, and reports whether
// it was waited for.
func (c *calls) deliver(id int64, resp *rpcResponse) bool {
	c.mu.Lock()
	ch, ok := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ok {
		ch <- resp // buffered, and each id is delivered at most once
	}
	return ok
}

// late reports whether an answer to id that deliver did not take is one
// the caller gave up on (cancelled, timed out, stopping) rather than one
// to a request never sent.
func (c *calls) late(id int64) bool { return id > 0 && id <= c.maxSent.Load() }

// router is the part of a wire that route hands messages to: serve
// answers a request of the server, answer delivers a response.
type router interface {
	serve(id json.RawMessage, method string, params json.RawMessage)
	answer(m envelope)
}

// route hands m to where its kind goes: a notification to h, a request
// to w's serve on a goroutine of its own, a response to w's answer. It
// reports false for a JSON object that is none of these.
func route(m envelope, h wireHandlers, w router) bool {
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && !hasID:
		h.notification(context.Background(), m.Method, m.Params)
	case m.Method != "":
		go w.serve(m.ID, m.Method, m.Params)
	case hasID:
		w.answer(m)
	default:
		return false
	}
	return true
}

// responseOf is the response m, a message with an id and no method,
// carries: its result, its error, or an error when it has neither.
func responseOf(m envelope) *rpcResponse {
	switch {
	case len(m.Error) > 0 && string(m.Error) != "null":
		return &rpcResponse{err: rpcErrorFrom(m.Error)}
	case len(m.Result) == 0:
		return &rpcResponse{err: &sdk.RPCError{Code: sdk.CodeInternalError, Message: "the upstream's response has neither result nor error"}}
	}
	return &rpcResponse{result: m.Result}
}

// wireHandlers receive what the upstream sends on its own.
type wireHandlers struct {
	// notification is called for each notification, in order; it must not
	// block. ctx is the context of the request on whose response stream
	// the notification came (streamable HTTP), or context.Background()
	// when the link does not say.
	notification func(ctx context.Context, method string, params json.RawMessage)
	// request answers a server-to-client request. An error that is an
	// *sdk.RPCError is sent as it is; others become internal errors.
	request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// rpcErrorFrom turns a raw JSON-RPC error object into an *sdk.RPCError,
// keeping data as it was sent.
func rpcErrorFrom(raw json.RawMessage) *sdk.RPCError {
	var e struct {
		Code    *int64          `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Code == nil {
		return &sdk.RPCError{Code: sdk.CodeInternalError, Message: "upstream sent a malformed error: " + truncate(string(raw), 200)}
	}
	return &sdk.RPCError{Code: *e.Code, Message: e.Message, Data: e.Data}
}

// asRPCError turns a handler's error into the JSON-RPC error to answer with.
func asRPCError(err error) *sdk.RPCError {
	var e *sdk.RPCError
	if errors.As(err, &e) {
		return e
	}
	return &sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()}
}

// truncate shortens s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + cutMark + strconv.Itoa(len(s)) + " bytes)"
}

// limiter lets through a burst of log lines per second and counts the rest,
// so an upstream flooding garbage cannot flood the executor's log.
type limiter struct {
	mu         sync.Mutex
	per        int
	window     time.Time
	n          int
	suppressed int
}

// allow reports whether one more line may be logged now. When a new window
// starts after lines were suppressed, it also returns how many.
func (l *limiter) allow() (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.window) >= time.Second {
		suppressed, l.suppressed = l.suppressed, 0
		l.window, l.n = now, 0
	}
	if l.n >= l.per {
		l.suppressed++
		return false, suppressed
	}
	l.n++
	return true, suppressed
}

// logLimited logs through lim.
func logLimited(log *slog.Logger, lim *limiter, level slog.Level, msg string, attrs ...any) {
	ok, suppressed := lim.allow()
	if suppressed > 0 {
		log.Warn(fmt.Sprintf("suppressed %d similar log lines", suppressed))
	}
	if ok {
		log.Log(context.Background(), level, msg, attrs...)
	}
}

// signalName is the conventional name of a signal ("SIGKILL"), which
// syscall.Signal's String ("killed") is not.
func signalName(sig syscall.Signal) string {
	for _, s := range []struct {
		sig  syscall.Signal
		name string
	}{
		{syscall.SIGKILL, "SIGKILL"}, {syscall.SIGTERM, "SIGTERM"}, {syscall.SIGINT, "SIGINT"},
		{syscall.SIGHUP, "SIGHUP"}, {syscall.SIGQUIT, "SIGQUIT"}, {syscall.SIGABRT, "SIGABRT"},
		{syscall.SIGSEGV, "SIGSEGV"}, {syscall.SIGBUS, "SIGBUS"}, {syscall.SIGFPE, "SIGFPE"},
		{syscall.SIGILL, "SIGILL"}, {syscall.SIGPIPE, "SIGPIPE"}, {syscall.SIGTRAP, "SIGTRAP"},
	} {
		if s.sig == sig {
			return s.name
		}
	}
	return sig.String()
}
