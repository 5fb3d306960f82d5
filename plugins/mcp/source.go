package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Restart backoff: the first restart waits minBackoff, each failure doubles
// the wait up to maxBackoff, and an upstream that stayed up for
// healthyAfter starts again from minBackoff.
var (
	minBackoff   = 200 * time.Millisecond
	maxBackoff   = 30 * time.Second
	healthyAfter = 30 * time.Second
)

// States of a source, as sent in sdk.Status.State.
const (
	StateStarting   = "starting"
	StateReady      = "ready"
	StateFailed     = "failed"
	StateRestarting = "restarting"
	StateStopped    = "stopped"
)

// source is one loaded upstream and its supervisor: exactly one live
// connection (one process for stdio) shared by every call, restarted with
// backoff when it fails.
type source struct {
	e    *Executor
	name string
	spec *Spec
	log  *slog.Logger

	ctx    context.Context // ends when the source is unloaded
	cancel context.CancelFunc
	done   chan struct{} // closed when the supervisor returns
	// stopBy is when the upstream must be down after the source was
	// stopped, in Unix nanoseconds; 0 means after its whole grace.
	stopBy atomic.Int64

	mu       sync.Mutex
	state    string
	pid      int
	restarts int
	lastErr  string
	nextTry  time.Time
	conn     *conn         // the live connection, when ready
	attempt  chan struct{} // closed when the current start attempt ends
	moved    chan struct{} // closed, and made anew, at each change of state
	running  bool          // the supervisor is running
	defs     sdk.Definitions
	subs     map[string]bool // resources clients subscribed to
	failed   failLog         // the last failure logged
	// stopWhy, once the source is stopped, says why (see stop): the error
	// of the calls it cut short.
	stopWhy string
}

func newSource(e *Executor, name string, spec *Spec) *source {
	s := &source{
		e: e, name: name, spec: spec, log: maskLog(e.log.With("source", name), spec),
		done: make(chan struct{}), subs: map[string]bool{}, state: StateStopped, moved: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// status is the source's health.
func (s *source) status() sdk.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked()
}

func (s *source) statusLocked() sdk.Status {
	return sdk.Status{State: s.state, PID: s.pid, Restarts: s.restarts, LastError: s.lastErr}
}

// failReminder is how often an upstream that keeps failing the same way
// is logged again (each failure in between is logged at debug level).
const failReminder = 10 * time.Minute

// failLog is what was last logged of a source's failures.
type failLog struct {
	err   string    // the error logged
	at    time.Time // when
	since int       // failures with that error since
}

// setState records a new state, tells the watchers and logs it: starting
// and restarting at debug level, a failure at warn level when its error is
// new and then, while the upstream keeps failing the same way, at debug
// level with a reminder every failReminder; the rest at info level.
func (s *source) setState(state string, pid int, lastErr string) {
	s.record(state, pid, lastErr, false)
}

// setStateQuiet is setState for the failure of a start that Load
// returns: its caller tells of it, so it is logged at debug level.
func (s *source) setStateQuiet(state string, pid int, lastErr string) {
	s.record(state, pid, lastErr, true)
}

func (s *source) record(state string, pid int, lastErr string, quiet bool) {
	lastErr = s.spec.redact(lastErr)
	s.mu.Lock()
	s.state, s.pid = state, pid
	if lastErr != "" || state == StateReady {
		s.lastErr = lastErr
	}
	close(s.moved)
	s.moved = make(chan struct{})
	st := s.statusLocked()
	msg, level := "upstream "+state, slog.LevelInfo
	switch {
	case state == StateStarting || state == StateRestarting || quiet:
		level = slog.LevelDebug
	case state == StateFailed && lastErr != s.failed.err:
		level, s.failed = slog.LevelWarn, failLog{err: lastErr, at: time.Now()}
	case state == StateFailed && time.Since(s.failed.at) >= failReminder:
		msg = fmt.Sprintf("upstream still failing: %d more times since %s", s.failed.since+1, s.failed.at.Format(time.RFC3339))
		level, s.failed = slog.LevelWarn, failLog{err: lastErr, at: time.Now()}
	case state == StateFailed:
		level = slog.LevelDebug
		s.failed.since++
	case state == StateReady:
		s.failed = failLog{}
	}
	s.mu.Unlock()
	attrs := []any{"restarts", st.Restarts}
	if pid > 0 {
		attrs = append(attrs, "pid", pid)
	}
	if lastErr != "" {
		attrs = append(attrs, "error", lastErr)
	}
	s.log.Log(context.Background(), level, msg, attrs...)
	s.e.broadcast(sdk.Change{Source: s.name, Status: &st})
}

// startEager starts the supervisor and waits for the first start attempt.
// If it fails the supervisor stops: Load reports the failure instead.
func (s *source) startEager(ctx context.Context) (sdk.Definitions, error) {
	first := make(chan error, 1)
	s.launch(first)
	select {
	case err := <-first:
		if err != nil {
			s.stop(time.Time{}, whyUnloaded)
			return sdk.Definitions{}, err
		}
		return s.definitionsSnapshot(), nil
	case <-ctx.Done():
		s.stop(time.Time{}, whyUnloaded)
		return sdk.Definitions{}, ctx.Err()
	}
}

// probe is Load of a lazy source: start, list, stop.
func (s *source) probe(ctx context.Context) (sdk.Definitions, error) {
	s.setState(StateStarting, 0, "")
	ctx, cancel := context.WithTimeout(ctx, s.spec.startTimeout())
	defer cancel()
	c, defs, err := s.connect(ctx)
	if err != nil {
		s.setStateQuiet(StateFailed, 0, err.Error())
		return sdk.Definitions{}, err
	}
	s.mu.Lock()
	s.defs = defs
	s.mu.Unlock()
	c.close()
	s.setState(StateStopped, 0, "")
	return defs, nil
}

// launch starts the supervisor (once). first, when not nil, receives the
// outcome of the first attempt, and a failed first attempt ends the
// supervisor.
func (s *source) launch(first chan<- error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.ctx.Err() != nil {
		return
	}
	s.running = true
	s.attempt = make(chan struct{})
	go s.supervise(first)
}

// supervise keeps one connection alive until the source is unloaded.
func (s *source) supervise(first chan<- error) {
	defer close(s.done)
	backoff := minBackoff
	for n := 0; ; n++ {
		state := StateStarting
		if n > 0 {
			state = StateRestarting
			s.mu.Lock()
			s.restarts++
			if s.attempt == nil {
				s.attempt = make(chan struct{})
			}
			s.mu.Unlock()
		}
		s.setState(state, 0, "")
		ctx, cancel := context.WithTimeout(s.ctx, s.spec.startTimeout())
		c, defs, err := s.connect(ctx)
		cancel()
		// The outcome and the end of the attempt are published together,
		// so acquire never sees neither a conn nor an attempt.
		s.mu.Lock()
		prev := s.defs
		if err == nil {
			s.defs, s.conn = defs, c
		} else {
			s.nextTry = time.Now().Add(backoff)
		}
		close(s.attempt)
		s.attempt = nil
		s.mu.Unlock()

		if err != nil {
			if s.ctx.Err() != nil {
				s.setState(StateStopped, 0, "")
				return
			}
			if first != nil {
				// Load returns err: its caller tells of it.
				s.setStateQuiet(StateFailed, 0, err.Error())
				first <- err
				return
			}
			s.setState(StateFailed, 0, err.Error())
			if !waitCtx(s.ctx, backoff) {
				s.setState(StateStopped, 0, "")
				return
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}

		up := time.Now()
		c.start()
		s.setState(StateReady, c.w.pid(), "")
		if first != nil {
			first <- nil
			first = nil
		} else if !sameDefinitions(prev, defs) {
			d := defs
			s.e.broadcast(sdk.Change{Source: s.name, Definitions: &d})
		}

		select {
		case <-c.w.dead():
			cause := c.w.cause()
			// A server that forgot the session (it restarted, or expired
			// it) is up: a new session starts at once, and the calls
			// meanwhile wait for it. A session that did not last
			// quickLoss is retried with backoff, against a server that
			// forgets every session.
			quick := errors.Is(cause, ErrSessionLost) && time.Since(up) >= quickLoss
			s.mu.Lock()
			s.conn = nil
			if time.Since(up) >= healthyAfter {
				backoff = minBackoff
			}
			s.nextTry = time.Now()
			if quick {
				s.attempt = make(chan struct{})
			} else {
				s.nextTry = s.nextTry.Add(backoff)
			}
			s.mu.Unlock()
			s.setState(StateFailed, c.w.pid(), cause.Error())
			c.close()
			if quick {
				continue
			}
			if !waitCtx(s.ctx, backoff) {
				s.setState(StateStopped, 0, "")
				return
			}
			backoff = min(2*backoff, maxBackoff)
		case <-s.ctx.Done():
			s.mu.Lock()
			s.conn = nil
			s.mu.Unlock()
			c.close()
			s.setState(StateStopped, 0, "")
			return
		}
	}
}

// connect opens a session with the upstream and lists its definitions.
func (s *source) connect(ctx context.Context) (*conn, sdk.Definitions, error) {
	c, err := s.handshake(ctx)
	if err != nil {
		return nil, sdk.Definitions{}, err
	}
	var defs sdk.Definitions
	if err := c.definitions(ctx, kindAll, &defs); err != nil {
		c.close()
		return nil, sdk.Definitions{}, s.startError(ctx, "the listing of its tools, resources and prompts", err, c)
	}
	if !c.modern {
		s.resubscribe(ctx, c)
	}
	return c, defs, nil
}

// handshake launches or connects the upstream and negotiates the protocol.
// Unless pinned, every transport speaks 2025-11-25: servers written for it
// (most today) ask the client for sampling, elicitation and roots with
// server-initiated requests, which 2026-07-28 removed, so the older revision
// is the one under which every tool works. Pinning 2026-07-28 on an HTTP
// server falls back to 2025-11-25 when the server does not offer it, and
// the auto transport falls back to legacy SSE.
func (s *source) handshake(ctx context.Context) (*conn, error) {
	pin := s.spec.ProtocolVersion
	switch s.spec.transport() {
	case TransportStdio:
		c := newConn(s)
		w, err := startStdio(s.spec, s.log, c.handlers(), s.stopDeadline)
		if err != nil {
			return nil, err
		}
		c.w = w
		if pin == "" {
			pin = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
		}
		step := "initialize"
		if mcpgo.IsModernProtocol(pin) {
			step = "server/discover"
			err = c.discover(ctx, pin)
		} else {
			err = c.initialize(ctx, pin)
		}
		if err != nil {
			c.close()
			return nil, s.startError(ctx, step, err, c)
		}
		return c, nil
	case TransportSSE:
		if pin == "" {
			pin = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
		}
		return s.dialHTTP(ctx, TransportSSE, pin)
	}
	if pin == "" {
		pin = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
	}
	if mcpgo.IsModernProtocol(pin) {
		c, err := s.dialHTTP(ctx, TransportStreamableHTTP, pin)
		if err == nil || ctx.Err() != nil {
			return c, err
		}
		s.log.Info("modern protocol not available; falling back to 2025-11-25", "reason", err)
	}
	c, err := s.dialHTTP(ctx, TransportStreamableHTTP, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)
	if err != nil && s.spec.Transport == TransportAuto && errors.Is(err, transport.ErrLegacySSEServer) {
		s.log.Info("the server refused a streamable HTTP initialize; trying the legacy HTTP+SSE transport")
		return s.dialHTTP(ctx, TransportSSE, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)
	}
	return c, err
}

// dialHTTP connects over HTTP (streamable HTTP, or the legacy HTTP+SSE
// transport for kind TransportSSE) and shakes hands with one protocol
// version.
func (s *source) dialHTTP(ctx context.Context, kind, version string) (*conn, error) {
	c := newConn(s)
	modern := mcpgo.IsModernProtocol(version)
	var err error
	if kind == TransportSSE {
		c.w, err = startSSE(ctx, s.spec, s.log, c.handlers())
	} else {
		c.w, err = startHTTP(ctx, s.spec, !modern, s.log, c.handlers())
	}
	if err != nil {
		c.w = nil
		return nil, s.startError(ctx, "the connection (the SSE stream's endpoint event)", err, c)
	}
	step := "initialize"
	if modern {
		step = "server/discover"
		err = c.discover(ctx, version)
	} else {
		err = c.initialize(ctx, version)
	}
	if err != nil {
		// Explained before the close, whose cause would mask the real one.
		err = s.startError(ctx, step, err, c)
		c.close()
		return nil, err
	}
	return c, nil
}

// startError explains a failed start: one that ran out of start_timeout
// (at step) says so and what to check; a remote server's failure is told
// once, with its URL (a *ConnectError); a stdio upstream that died says
// why.
func (s *source) startError(ctx context.Context, step string, err error, c *conn) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && s.ctx.Err() == nil {
		return s.startTimedOut(step, c)
	}
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ce
	}
	if c.w == nil {
		return err
	}
	if cause := c.w.cause(); cause != nil && !errors.Is(err, sdk.ErrUnavailable) {
		err = fmt.Errorf("%w: %v", err, cause)
		if errors.Is(cause, ErrSessionLost) {
			err = lostSession(err)
		}
		return err
	}
	return err
}

// startTimedOut is the error of a start that ran out of start_timeout at
// step: what the upstream said meanwhile, and what to check.
func (s *source) startTimedOut(step string, c *conn) error {
	var b strings.Builder
	fmt.Fprintf(&b, "no answer to %s within %s (start_timeout)", step, s.spec.startTimeout())
	if w, ok := c.w.(*stdioWire); ok {
		fmt.Fprintf(&b, ": is %q an MCP server that speaks JSON-RPC on its stdin and stdout?", s.spec.Command)
		if junk := w.stdoutJunk(); junk != "" {
			fmt.Fprintf(&b, " It wrote on stdout %q, which is not JSON-RPC (an MCP server logs to stderr)", junk)
		} else {
			b.WriteString(" It wrote nothing on stdout")
		}
		b.WriteString(w.stderrTail())
		b.WriteString(".")
	} else {
		fmt.Fprintf(&b, ": is %s an MCP endpoint, and is the server up?", redactURL(s.spec.URL))
		if s.spec.transport() == TransportSSE {
			b.WriteString(" A legacy SSE server names its endpoint at once; for a streamable HTTP endpoint, set type: http (or transport: streamable-http).")
		}
	}
	b.WriteString(" If it is only slow to start (a first npx download, say), raise start_timeout")
	return errors.New(b.String())
}

// acquire returns the live connection, starting a lazy source or waiting
// for a start attempt in progress. While the upstream waits to be
// restarted, it fails at once.
func (s *source) acquire(ctx context.Context) (*conn, error) {
	for {
		s.mu.Lock()
		if s.conn != nil {
			c := s.conn
			s.mu.Unlock()
			return c, nil
		}
		if s.ctx.Err() != nil {
			why := s.stopWhy
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: source %q was stopped: %s", sdk.ErrUnknownSource, s.name, why)
		}
		if !s.running {
			s.mu.Unlock()
			s.launch(nil)
			continue
		}
		if s.attempt != nil {
			attempt := s.attempt
			s.mu.Unlock()
			select {
			case <-attempt:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the upstream to start: %w", ctx.Err())
			}
		}
		err := fmt.Errorf("%w: the upstream is %s: %s; next start in %s", sdk.ErrUnavailable,
			s.state, s.lastErr, max(0, time.Until(s.nextTry)).Round(time.Millisecond))
		s.mu.Unlock()
		return nil, err
	}
}

// reload re-lists a source whose spec did not change; ok is false when the
// source must be started anew.
func (s *source) reload(ctx context.Context) (sdk.Definitions, bool) {
	s.mu.Lock()
	c, running := s.conn, s.running
	s.mu.Unlock()
	if c == nil {
		if !running && s.spec.Start == StartLazy {
			return s.definitionsSnapshot(), true
		}
		return sdk.Definitions{}, false
	}
	defs := s.definitionsSnapshot()
	if err := c.definitions(ctx, kindAll, &defs); err != nil {
		return sdk.Definitions{}, false
	}
	s.setDefinitions(c, defs)
	return defs, true
}

// Why a source is stopped, as the calls it cuts short say.
const (
	whyUnloaded = "the gateway unloaded it (a config reload removed it or changed its settings, or the gateway is stopping)"
	whyRespec   = "it is being restarted with new settings"
	whyShutdown = "the mcp executor is shutting down"
)

// stoppedError is the error of a call cut short by a stop of its source.
// It is an sdk.ErrUnavailable without saying so: the source did not fail.
type stoppedError struct{ source, why string }

func (e *stoppedError) Error() string {
	return fmt.Sprintf("source %q was stopped while the call ran: %s", e.source, e.why)
}

func (e *stoppedError) Unwrap() error { return sdk.ErrUnavailable }

// stop ends the supervisor and the upstream and waits for both; why says
// why, to the calls in flight. A stdio upstream is down by deadline if it
// is not zero (see stopDeadline).
func (s *source) stop(deadline time.Time, why string) {
	if !deadline.IsZero() {
		s.stopBy.Store(deadline.UnixNano())
	}
	s.mu.Lock()
	if s.stopWhy == "" {
		s.stopWhy = why
	}
	s.mu.Unlock()
	s.cancel()
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	if running {
		<-s.done
	}
}

// stopDeadline is when a stdio upstream being stopped must be down: the
// earlier of the source's stop deadline and the executor's, less
// stopMargin for the caller to hear back in time; zero when there is
// none.
func (s *source) stopDeadline() time.Time {
	by := s.stopBy.Load()
	if e := s.e.stopBy.Load(); e != 0 && (by == 0 || e < by) {
		by = e
	}
	if by == 0 {
		return time.Time{}
	}
	return time.Unix(0, by).Add(-stopMargin)
}

func (s *source) definitionsSnapshot() sdk.Definitions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.defs
}

// setDefinitions takes a re-listed set from the live conn c and tells the
// watchers when it changed.
func (s *source) setDefinitions(c *conn, defs sdk.Definitions) {
	s.mu.Lock()
	if s.conn != c {
		s.mu.Unlock()
		return
	}
	changed := !sameDefinitions(s.defs, defs)
	s.defs = defs
	s.mu.Unlock()
	if changed {
		s.e.broadcast(sdk.Change{Source: s.name, Definitions: &defs})
	}
}

// notify passes a source-level notification to the watchers.
func (s *source) notify(n sdk.Notification) {
	s.e.broadcast(sdk.Change{Source: s.name, Notification: &n})
}

// subscribe records a resource subscription, so that it survives restarts.
func (s *source) subscribe(uri string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.subs[uri] = true
	} else {
		delete(s.subs, uri)
	}
}

func (s *source) subscriptions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uris := make([]string, 0, len(s.subs))
	for u := range s.subs {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	return uris
}

// resubscribe renews the subscriptions of the previous session.
func (s *source) resubscribe(ctx context.Context, c *conn) {
	for _, uri := range s.subscriptions() {
		if _, err := c.request(ctx, "resources/subscribe", mustJSON(map[string]string{"uri": uri})); err != nil {
			s.log.Warn("renewing a resource subscription failed", "uri", uri, "err", err)
		}
	}
}

// call forwards one request to the upstream.
func (s *source) call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	if t := time.Duration(s.spec.Timeout); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, s.spec.redactErr(err)
	}
	res, err := c.call(ctx, method, params, req.Client, call)
	if err != nil && resendable(err) && s.ctx.Err() == nil {
		// The server never saw the request: send it again, once, on the
		// session the supervisor starts instead.
		s.log.Info("the server lost the session before it took the request; sending it again on a new session", "method", method)
		if c, err = s.reacquire(ctx, c); err != nil {
			return nil, s.spec.redactErr(err)
		}
		res, err = c.call(ctx, method, params, req.Client, call)
	}
	if err != nil {
		s.refused(err)
	}
	if err != nil && s.ctx.Err() != nil && errors.Is(err, sdk.ErrUnavailable) {
		// Cut short by a stop, not by a failure of the upstream.
		s.mu.Lock()
		why := s.stopWhy
		s.mu.Unlock()
		return nil, &stoppedError{source: s.name, why: why}
	}
	if err == nil && !c.modern && (method == "resources/subscribe" || method == "resources/unsubscribe") {
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(params, &p) == nil && p.URI != "" {
			s.subscribe(p.URI, method == "resources/subscribe")
		}
	}
	return res, s.spec.redactErr(err)
}

// quickLoss is how long a session must have lasted for its loss to start
// a new one at once (see supervise).
const quickLoss = time.Second

// reacquire returns a connection other than old, whose session the server
// lost: the one the supervisor starts next, waiting through its backoff
// and one start attempt; when that attempt fails, acquire's error.
func (s *source) reacquire(ctx context.Context, old *conn) (*conn, error) {
	attempted := false
	for {
		s.mu.Lock()
		c, attempt, moved := s.conn, s.attempt, s.moved
		s.mu.Unlock()
		switch {
		case s.ctx.Err() != nil:
			return s.acquire(ctx)
		case c != nil && c != old:
			return c, nil
		case attempt != nil:
			attempted = true
			select {
			case <-attempt:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for a new session with the upstream: %w", ctx.Err())
			}
		case c == nil && attempted:
			return s.acquire(ctx)
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a new session with the upstream: %w", ctx.Err())
		}
	}
}

// refused records a call's refusal by a remote server (HTTP 401 or 403:
// the credentials, or what they may access) as the source's last error,
// where operators look. The state stays as it is: the server is up, and
// other tools may work.
func (s *source) refused(err error) {
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Status != http.StatusUnauthorized && ce.Status != http.StatusForbidden {
		return
	}
	msg := s.spec.redact(err.Error())
	s.mu.Lock()
	if s.lastErr == msg {
		s.mu.Unlock()
		return
	}
	s.lastErr = msg
	st := s.statusLocked()
	s.mu.Unlock()
	s.log.Warn("upstream refused a call", "error", msg)
	s.e.broadcast(sdk.Change{Source: s.name, Status: &st})
}

// sameDefinitions compares two sets byte for byte.
func sameDefinitions(a, b sdk.Definitions) bool {
	eq := func(x, y []json.RawMessage) bool {
		return slices.EqualFunc(x, y, func(p, q json.RawMessage) bool { return bytes.Equal(p, q) })
	}
	return eq(a.Tools, b.Tools) && eq(a.Resources, b.Resources) &&
		eq(a.ResourceTemplates, b.ResourceTemplates) && eq(a.Prompts, b.Prompts) && bytes.Equal(a.Server, b.Server)
}
