package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/plugins/script/internal/proc"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// maxMessage bounds one JSON-RPC message from a script.
const maxMessage = 16 << 20

// conn is a jsonrpc session with one script process: per call, or the
// persistent process of a tool, shared by its calls. Calls are multiplexed
// on the process by id: any number may be in flight, and the script's
// answers are routed by the goroutine that reads its stdout (conn.line).
// Timeouts and stalls are watched by timers, not by a goroutine per call.
type conn struct {
	t *tool
	p *proc.Process

	wmu  sync.Mutex // serializes writes to stdin
	wbuf []byte     // the frame being written, reused under wmu

	mu         sync.Mutex
	nextID     int64
	pending    map[int64]*pending
	last       *pending // the most recent call, for unattributed messages (find)
	dead       bool     // the process is gone: no new calls
	stallTimer *time.Timer
	stallArmed bool // stallTimer will fire (and look at pending)
	gone       chan struct{}

	// Of a persistent process, under t.mu: the service variables it was
	// started with, and the calls that chose it and have not returned.
	wiring map[string]string
	users  int
}

// pending is one tools/call waiting for its answer.
type pending struct {
	id     int64
	ctx    context.Context
	call   sdk.Call
	client string    // sdk.CallRequest.Client: "" is a client of its own
	sent   time.Time // when the call was registered, for its stall clock
	logs   logForwarder

	settled atomic.Bool
	answer  chan outcome // buffered: gets the first outcome only (settle)
}

// outcome ends a pending call: the script's answer (or a crash result), or
// a status the executor ended the call with (timeout, stalled).
type outcome struct {
	res    json.RawMessage
	status string
}

// settle delivers o unless the call already had an outcome.
func (pc *pending) settle(o outcome) bool {
	if !pc.settled.CompareAndSwap(false, true) {
		return false
	}
	pc.answer <- o
	return true
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *sdk.RPCError   `json:"error,omitempty"`
}

// startConn starts the script and its session.
func (t *tool) startConn(argv []string, deps *installed) (*conn, error) {
	c := &conn{t: t, pending: map[int64]*pending{}, gone: make(chan struct{})}
	cfg := t.procConfig(argv, deps)
	cfg.Stdout = proc.Output{OnLine: c.line, MaxLine: maxMessage}
	cfg.Stderr = proc.Output{Keep: t.cap, Tail: true, OnLine: c.stderrLine, MaxLine: maxLogLine}
	p, err := proc.Start(cfg)
	if err != nil {
		return nil, err
	}
	c.p = p
	go func() {
		<-p.Done()
		c.failAll()
		close(c.gone)
	}()
	return c, nil
}

// failAll answers every pending call once the process is gone, and refuses
// new ones.
func (c *conn) failAll() {
	r := c.p.Result()
	what := fmt.Sprintf("exit status %d", r.ExitCode)
	if r.Signal != 0 {
		what = "killed by signal " + r.Signal.String()
	}
	msg := fmt.Sprintf("the tool's process ended (%s) before it answered", what) + outputNote(nil, 0, r.Stderr)
	res := errorResult(statusCrashed, msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead = true
	if c.stallTimer != nil {
		c.stallTimer.Stop()
	}
	for id, pc := range c.pending {
		pc.settle(outcome{res: res})
		delete(c.pending, id)
	}
}

func (c *conn) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.write(append(b, '\n'))
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.p.Stdin().Write(b)
	return err
}

// writeCall sends tools/call for call id, framed by hand: this is the hot
// path of a persistent tool.
func (c *conn) writeCall(id int64, args json.RawMessage) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := append(c.wbuf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = append(b, c.t.nameJSON...)
	b = append(b, `,"arguments":`...)
	if bytes.ContainsAny(args, "\r\n") {
		// Whitespace between tokens (it cannot be inside a JSON string)
		// would split the line.
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
		args = buf.Bytes()
	}
	b = append(b, args...)
	b = append(b, `,"_meta":{"progressToken":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, "}}}\n"...)
	if cap(b) <= 64<<10 {
		c.wbuf = b
	}
	_, err := c.p.Stdin().Write(b)
	return err
}

// stop ends the process: stdin is closed so a well-behaved script exits,
// then the group gets SIGTERM and SIGKILL.
func (c *conn) stop() {
	_ = c.p.Stdin().Close()
	select {
	case <-c.p.Done():
	case <-time.After(200 * time.Millisecond):
	}
	c.p.Stop()
}

// register adds a call; it fails when the process is gone.
func (c *conn) register(pc *pending) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	c.nextID++
	pc.id = c.nextID
	pc.sent = time.Now()
	c.pending[pc.id] = pc
	c.last = pc
	if c.t.stallWatched() && !c.stallArmed {
		c.stallArmed = true
		if c.stallTimer == nil {
			c.stallTimer = time.AfterFunc(c.t.stall, c.checkStall)
		} else {
			c.stallTimer.Reset(c.t.stall)
		}
	}
	return true
}

// doomed reports whether the process is about to be killed because one of
// its calls was cancelled (request kills it: a script cannot be trusted to
// abandon one call). The cancellation reaches the call's context before
// the goroutine that kills the process runs, and a call that arrives in
// between must start a new process rather than die with the old one.
func (c *conn) doomed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return true
	}
	for _, pc := range c.pending {
		if pc.ctx.Err() != nil {
			return true
		}
	}
	return false
}

func (c *conn) unregister(pc *pending) {
	c.mu.Lock()
	delete(c.pending, pc.id)
	if c.last == pc {
		c.last = nil
	}
	c.mu.Unlock()
}

// checkStall runs when the earliest stall clock of the pending calls may
// have run out. A call's clock starts when it is sent and restarts with any
// output of the process (stdout or stderr). Stalled calls end as stalled
// and the process is stopped; otherwise the timer is set for the next
// deadline, while calls are pending.
func (c *conn) checkStall() {
	idle := c.p.Idle()
	now := time.Now()
	stall := c.t.stall
	killed := false
	c.mu.Lock()
	next := stall
	for _, pc := range c.pending {
		quiet := min(now.Sub(pc.sent), idle)
		if quiet >= stall {
			killed = pc.settle(outcome{status: statusStalled}) || killed
		} else {
			next = min(next, stall-quiet)
		}
	}
	c.stallArmed = !killed && !c.dead && len(c.pending) > 0
	if c.stallArmed {
		c.stallTimer.Reset(next)
	}
	c.mu.Unlock()
	if killed {
		// The callers stop the process too; doing it here also frees a
		// caller blocked writing to a script that no longer reads.
		c.p.Stop()
	}
}

// request sends tools/call and waits for the answer, enforcing the call's
// timeout and stall timeout. On timeout, stall or cancellation the process
// is killed (a script cannot be trusted to abandon one call) and the status
// says why.
func (c *conn) request(ctx context.Context, args json.RawMessage, call sdk.Call) json.RawMessage {
	client, _ := ctx.Value(clientKey{}).(string)
	pc := &pending{ctx: ctx, call: call, client: client, answer: make(chan outcome, 1),
		logs: logForwarder{tool: c.t.spec.Tool.Name, call: call}}
	if !c.register(pc) {
		return errorResult(statusCrashed, "the tool's process ended before it answered")
	}
	deadline := time.AfterFunc(c.t.timeout, func() {
		if pc.settle(outcome{status: statusTimeout}) {
			c.p.Stop()
		}
	})
	defer func() {
		deadline.Stop()
		c.unregister(pc)
		pc.logs.finish()
	}()
	var o outcome
	if err := c.writeCall(pc.id, args); err != nil {
		select {
		case o = <-pc.answer:
		case <-time.After(time.Second):
			return errorResult(statusCrashed, fmt.Sprintf("could not send the call to the tool: %v", err))
		}
	} else {
		select {
		case o = <-pc.answer:
		case <-ctx.Done():
			o = outcome{status: statusCanceled}
		}
	}
	if o.status == "" {
		return o.res
	}
	c.p.Stop()
	<-c.gone // so that the next call starts a new process
	r := c.p.Result()
	return errorResult(o.status, hint(o.status, c.t.timeout, c.t.stall)+outputNote(nil, 0, r.Stderr))
}

// find returns the call a script's message belongs to: the one whose
// progress token it names, else the most recent one, provided every call in
// flight came from the same client. With calls of several clients on one
// persistent process, a message without a token could belong to any of
// them, and guessing could hand one client's log lines or tool calls to
// another: find returns nil.
func (c *conn) find(params json.RawMessage, tokenAtTop bool) *pending {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
		Meta  struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	tok := p.Meta.Token
	if tokenAtTop {
		tok = p.Token
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, err := strconv.ParseInt(string(bytes.Trim(tok, `"`)), 10, 64); err == nil {
		if pc := c.pending[id]; pc != nil {
			return pc
		}
	}
	if c.last == nil {
		return nil
	}
	for _, pc := range c.pending {
		if pc != c.last && (pc.client == "" || pc.client != c.last.client) {
			return nil
		}
	}
	return c.last
}

// line handles one line of the script's stdout.
func (c *conn) line(line []byte, cut bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	m, ok := message{}, false
	if !cut && line[0] == '{' {
		m, ok = decodeMessage(line)
	}
	if !ok {
		// Stray output (a debug print): a log line, not a protocol error.
		if pc := c.find(nil, false); pc != nil {
			pc.logs.notify("info", "stdout: "+clip(validUTF8(line), maxLogLine))
		} else {
			c.t.e.log.Info("tool stdout", "source", c.t.source, "line", clip(validUTF8(line), maxLogLine))
		}
		return
	}
	switch {
	case m.Method == "" && len(m.ID) > 0:
		c.answer(m) // done with line when it returns
	case m.Method != "" && len(m.ID) == 0:
		m.Params = bytes.Clone(m.Params) // Notify may keep it
		c.notification(m)
	case m.Method != "":
		m.ID, m.Params = bytes.Clone(m.ID), bytes.Clone(m.Params)
		go c.serve(m)
	}
}

// answer routes the script's answer to its call.
func (c *conn) answer(m message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	c.mu.Lock()
	pc := c.pending[id]
	c.mu.Unlock()
	if err != nil || pc == nil {
		c.t.e.log.Warn("tool answered an unknown request", "source", c.t.source, "id", string(m.ID))
		return
	}
	var res json.RawMessage
	if m.Error != nil {
		res = errorResult(statusError, "the tool answered with an error: "+m.Error.Message)
	} else {
		res = withStatus(m.Result, statusOK)
	}
	pc.settle(outcome{res: res})
}

func (c *conn) notification(m message) {
	switch m.Method {
	case "notifications/progress":
		pc := c.find(m.Params, true)
		var p progressLine
		if pc == nil || json.Unmarshal(m.Params, &p) != nil || p.Progress == nil {
			return
		}
		_ = pc.call.Progress(sdk.Progress{Progress: *p.Progress, Total: p.Total, Message: p.Message})
	case "notifications/message":
		if pc := c.find(m.Params, false); pc != nil {
			_ = pc.call.Notify(sdk.Notification{Method: m.Method, Params: m.Params})
			return
		}
		c.t.e.log.Info("tool log message not forwarded: it names no call in flight (put the call's _meta.progressToken in it)",
			"source", c.t.source, "params", clip(validUTF8(m.Params), maxLogLine))
	}
}

// serve answers a request of the script: tools/call, state/get, state/set.
func (c *conn) serve(m message) {
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	result, rpcErr := c.handle(m)
	if rpcErr != nil {
		reply["error"] = rpcErr
	} else {
		reply["result"] = result
	}
	_ = c.send(reply)
}

func (c *conn) handle(m message) (any, *sdk.RPCError) {
	switch m.Method {
	case "tools/call":
		pc := c.find(m.Params, false)
		if pc == nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidRequest, Message: "tools/call outside a call of this tool, or without the _meta.progressToken of its call while calls of several clients are in flight"}
		}
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Name == "" {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "tools/call needs params {name, arguments}"}
		}
		if len(p.Arguments) == 0 {
			p.Arguments = json.RawMessage("{}")
		}
		res, err := pc.call.CallTool(pc.ctx, p.Name, p.Arguments)
		if err != nil {
			if e, ok := err.(*sdk.RPCError); ok {
				return nil, e
			}
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: fmt.Sprintf("tools/call %s: %v", p.Name, err)}
		}
		return json.RawMessage(res), nil
	case "state/get":
		var p struct {
			Key *string `json:"key"`
		}
		_ = json.Unmarshal(m.Params, &p)
		v, err := c.t.state.get(p.Key)
		if err != nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()}
		}
		return map[string]any{"value": v}, nil
	case "state/set":
		var p struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Key == "" {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "state/set needs params {key, value}"}
		}
		if err := c.t.state.set(p.Key, p.Value); err != nil {
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()}
		}
		return map[string]any{}, nil
	case "ping":
		return map[string]any{}, nil
	}
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "method not found: " + m.Method + " (a script may send tools/call, state/get, state/set)"}
}

func (c *conn) stderrLine(line []byte, cut bool) {
	if pc := c.find(nil, false); pc != nil {
		pc.logs.line(line, cut)
		return
	}
	c.t.e.log.Info("tool stderr", "source", c.t.source, "line", clip(validUTF8(line), maxLogLine))
}

// callOnce runs a jsonrpc call in a fresh process.
func (t *tool) callOnce(ctx context.Context, args json.RawMessage, deps *installed, call sdk.Call) (json.RawMessage, error) {
	argv, err := t.argv(args, deps)
	if err != nil {
		return errorResult(statusError, err.Error()), nil
	}
	c, err := t.startConn(argv, deps)
	if err != nil {
		return errorResult(statusError, fmt.Sprintf("could not start the tool: %v", err)), nil
	}
	res := c.request(ctx, args, call)
	c.stop()
	return res, nil
}

// callPersistent runs a call on the tool's warm process, starting it when
// there is none or the last one died. The command line (and the entry
// check) is built only to start one. When the services the tool requires
// moved (their variables changed since the process started, e.g. a service
// restarted on another port), a new process is started for this and later
// calls, and the old one stops once its calls have returned.
func (t *tool) callPersistent(ctx context.Context, args json.RawMessage, deps *installed, call sdk.Call) (json.RawMessage, error) {
	var wiring map[string]string
	if w := t.wiring.Load(); w != nil {
		wiring = *w
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", sdk.ErrUnavailable, errClosed)
	}
	c := t.worker
	if c != nil {
		select {
		case <-c.gone:
			c = nil
		default:
			if !maps.Equal(c.wiring, wiring) || c.doomed() {
				t.retire(c)
				c = nil
			}
		}
	}
	if c == nil {
		argv, err := t.argv(args, deps)
		if err != nil {
			t.mu.Unlock()
			return errorResult(statusError, err.Error()), nil
		}
		c, err = t.startConn(argv, deps)
		if err != nil {
			t.mu.Unlock()
			return errorResult(statusError, fmt.Sprintf("could not start the tool: %v", err)), nil
		}
		c.wiring = wiring
		t.worker = c
	}
	c.users++
	t.mu.Unlock()
	res := c.request(ctx, args, call)
	t.mu.Lock()
	c.users--
	_, last := t.retired[c]
	last = last && c.users == 0
	if last {
		delete(t.retired, c)
	}
	t.mu.Unlock()
	if last {
		c.stop()
	}
	return res, nil
}

// retire sets c aside (t.mu held): it stops now if no call is using it,
// else when the last one returns (or when the tool closes).
func (t *tool) retire(c *conn) {
	if t.retired == nil {
		t.retired = map[*conn]struct{}{}
	}
	t.retired[c] = struct{}{}
	if c.users == 0 {
		go func() {
			c.stop()
			t.mu.Lock()
			delete(t.retired, c)
			t.mu.Unlock()
		}()
	}
}
