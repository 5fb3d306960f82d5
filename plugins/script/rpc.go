package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/skillgate/skillgate/plugins/script/internal/proc"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// maxMessage bounds one JSON-RPC message from a script.
const maxMessage = 16 << 20

// conn is a jsonrpc session with one script process: per call, or the
// persistent process of a tool, shared by its calls.
type conn struct {
	t *tool
	p *proc.Process

	wmu sync.Mutex // serializes writes to stdin

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*pending
	last    *pending // the most recent call, for unattributed messages
	gone    chan struct{}
}

// pending is one tools/call waiting for its answer.
type pending struct {
	id     int64
	ctx    context.Context
	call   sdk.Call
	answer chan json.RawMessage // the result, or an error result
	logs   *logForwarder
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

// failAll answers every pending call once the process is gone.
func (c *conn) failAll() {
	r := c.p.Result()
	what := fmt.Sprintf("exit status %d", r.ExitCode)
	if r.Signal != 0 {
		what = "killed by signal " + r.Signal.String()
	}
	msg := fmt.Sprintf("the tool's process ended (%s) before it answered", what) + outputNote(nil, 0, r.Stderr)
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, pc := range c.pending {
		select {
		case pc.answer <- errorResult(statusCrashed, msg):
		default:
		}
		delete(c.pending, id)
	}
}

func (c *conn) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.p.Stdin().Write(append(b, '\n'))
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

// request sends tools/call and waits for the answer, enforcing the call's
// timeout and stall timeout. On timeout, stall or cancellation the process
// is killed (a script cannot be trusted to abandon one call) and the status
// says why.
func (c *conn) request(ctx context.Context, args json.RawMessage, call sdk.Call) json.RawMessage {
	pc := &pending{ctx: ctx, call: call, answer: make(chan json.RawMessage, 1),
		logs: &logForwarder{tool: c.t.spec.Tool.Name, call: call}}
	c.mu.Lock()
	c.nextID++
	pc.id = c.nextID
	c.pending[pc.id] = pc
	c.last = pc
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, pc.id)
		if c.last == pc {
			c.last = nil
		}
		c.mu.Unlock()
		pc.logs.finish()
	}()
	err := c.send(map[string]any{
		"jsonrpc": "2.0", "id": pc.id, "method": "tools/call",
		"params": map[string]any{
			"name":      c.t.spec.Tool.Name,
			"arguments": args,
			"_meta":     map[string]any{"progressToken": pc.id},
		},
	})
	if err != nil {
		select {
		case <-c.gone:
			return <-pc.answer
		case <-time.After(time.Second):
		}
		return errorResult(statusCrashed, fmt.Sprintf("could not send the call to the tool: %v", err))
	}
	c.p.Touch()
	done := make(chan struct{})
	var res json.RawMessage
	go func() {
		select {
		case res = <-pc.answer:
		case <-c.gone:
			select {
			case res = <-pc.answer:
			default:
				res = errorResult(statusCrashed, "the tool's process ended before it answered")
			}
		}
		close(done)
	}()
	status := c.t.supervise(ctx, c.p, done)
	if status == statusOK {
		<-done
		return res
	}
	c.p.Stop()
	<-done
	r := c.p.Result()
	return errorResult(status, hint(status, c.t.timeout, c.t.stall)+outputNote(nil, 0, r.Stderr))
}

// find returns the call a script's message belongs to: the one whose
// progress token it names, else the most recent one.
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
	return c.last
}

// line handles one line of the script's stdout.
func (c *conn) line(line []byte, cut bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var m message
	if cut || line[0] != '{' || json.Unmarshal(line, &m) != nil {
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
		c.answer(m)
	case m.Method != "" && len(m.ID) == 0:
		c.notification(m)
	case m.Method != "":
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
	select {
	case pc.answer <- res:
	default:
	}
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
		}
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
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidRequest, Message: "tools/call outside a call of this tool"}
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
func (t *tool) callOnce(ctx context.Context, argv []string, deps *installed, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	c, err := t.startConn(argv, deps)
	if err != nil {
		return errorResult(statusError, fmt.Sprintf("could not start the tool: %v", err)), nil
	}
	res := c.request(ctx, args, call)
	c.stop()
	return res, nil
}

// callPersistent runs a call on the tool's warm process, starting it when
// there is none or the last one died.
func (t *tool) callPersistent(ctx context.Context, argv []string, deps *installed, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
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
		}
	}
	if c == nil {
		var err error
		c, err = t.startConn(argv, deps)
		if err != nil {
			t.mu.Unlock()
			return errorResult(statusError, fmt.Sprintf("could not start the tool: %v", err)), nil
		}
		t.worker = c
	}
	t.mu.Unlock()
	return c.request(ctx, args, call), nil
}
