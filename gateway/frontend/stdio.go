package frontend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// The stdio transport is mcp-go's, with the front end on both sides of it:
// inWatcher reads the client's lines before mcp-go does, outWriter writes
// mcp-go's lines to the client. Between them they
//
//   - rewrite answers to the sources' bytes (raw.go),
//   - serve extension methods (Options.Methods), which mcp-go does not know,
//   - send no response for a request the client cancelled
//     (notifications/cancelled): mcp-go cancels its handler, but answers it
//     anyway,
//   - keep the request ids mcp-go would change: it decodes a number as a
//     float64 and answers 9007199254740993 as 9007199254740992. A request
//     with an integer id a float64 cannot hold reaches mcp-go under an id
//     of the front end's, and its answer gets the client's back.

// ServeStdio serves one client over in and out until in closes, out
// breaks (the client stopped reading: the error wraps ErrStdoutClosed) or
// ctx ends and the connection drained (see StdioDrain and
// stdiodrain.go). Nothing but protocol messages is written to out.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	st := server.NewStdioServer(s.mcp)
	st.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	sr := &stdioRequests{s: s, pending: map[string]*stdioRequest{}, swapped: map[string]string{}}
	// ctx's end begins the drain; the connection lives on until it ends.
	stop, drain := ctx, stdioDrainOf(ctx)
	ctx = context.WithoutCancel(ctx)
	ctx = withClient(context.WithValue(ctx, profileKey{}, s.opts.StdioProfile), stdioSession)
	ctx = WithOrigin(ctx, Origin{Transport: TransportStdio})
	// The connection's context ends when the client goes, and with it
	// what runs for the client beyond its requests (clientLife).
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx = context.WithValue(ctx, clientLifeKey{}, ctx)
	defer s.Disclosure().EndSession(stdioSession)
	defer s.stdioCaps.Store(0)
	ow := &outWriter{sr: sr, w: out, broken: func(err error) {
		cancel(fmt.Errorf("%w: %w", ErrStdoutClosed, err))
	}}
	ctx = context.WithValue(ctx, stdioOutKey{}, ow)
	methods := &stdioMethods{sr: sr, ctx: ctx, ow: ow, gone: make(chan struct{})}
	iw := &inWatcher{sr: sr, r: bufio.NewReaderSize(in, 64<<10), methods: methods, ow: ow}
	defer methods.wg.Wait()
	defer close(methods.gone) // first: a method waiting for the start ends
	drained := make(chan struct{})
	defer func() { <-drained }()
	go func() {
		defer close(drained)
		select {
		case <-stop.Done():
			sr.drain(drain, ow, ctx.Done(), cancel, context.Cause(stop))
		case <-ctx.Done(): // the client went
		}
	}()
	err := st.Listen(ctx, iw, ow)
	cancel(nil) // the client went: a drain under way stops waiting
	if cause := context.Cause(ctx); errors.Is(cause, ErrStdoutClosed) {
		return cause
	}
	if err == context.Canceled || err == io.EOF {
		return nil
	}
	return err
}

// stdioOutKey is the context key under which a stdio client's request
// carries the outWriter its call's notifications are written with.
type stdioOutKey struct{}

// stdioRequests are the stdio client's requests in flight.
type stdioRequests struct {
	s  *Server
	mu sync.Mutex
	// pending holds them by id as mcp-go answers it (idKey), or as the
	// front end answers an extension method.
	pending map[string]*stdioRequest
	// swapped maps the client's id of a request that mcp-go got under an
	// id of the front end's to that id (see exactID).
	swapped map[string]string
	seq     uint64
	// stopping refuses new requests (a drain, stdiodrain.go); idle, when
	// not nil, is closed once pending is empty.
	stopping bool
	idle     chan struct{}
}

// stdioRequest is what is kept of a request until its answer.
type stdioRequest struct {
	method    string // the method whose answer is rewritten; "" for none
	dreq      disclosure.Request
	modern    bool            // a 2026-07-28 request
	id        json.RawMessage // the client's id, when mcp-go got another
	cancelled bool            // by the client, or cut by a drain: mcp-go's answer is dropped
	cancel    context.CancelFunc
	clientID  json.RawMessage // the id as the client wrote it
}

// add records a request for mcp-go in line, with client id id, and
// returns the line to hand mcp-go; nil when the connection is stopping
// (the caller answers it).
func (sr *stdioRequests) add(line, id []byte, req *stdioRequest) []byte {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.stopping {
		return nil
	}
	req.clientID = id
	if exactID(id) {
		sr.seq++
		sub := `"` + sr.s.raw.prefix + "id-" + strconv.FormatUint(sr.seq, 10) + `"`
		if start, end := valueOf(line, "id"); start >= 0 {
			req.id = id
			sr.swapped[string(id)] = sub
			sr.pending[sub] = req
			return splice(line, start, end, []byte(sub))
		}
	}
	sr.pending[idKey(id)] = req
	return line
}

// cancel marks the request a notifications/cancelled line names (by
// requestID) as cancelled, and cancels an extension method's. It returns
// the line to hand mcp-go: nil when mcp-go has nothing to cancel, the
// front end's id in place of the client's when mcp-go got that.
func (sr *stdioRequests) cancel(line, requestID []byte) []byte {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	key, swapped := sr.swapped[string(requestID)]
	if !swapped {
		key = idKey(requestID)
	}
	req := sr.pending[key]
	if req == nil {
		return line // answered already, or unknown: mcp-go ignores it too
	}
	req.cancelled = true
	if req.cancel != nil {
		req.cancel()
		return nil
	}
	if swapped {
		if ps, pe := valueOf(line, "params"); ps >= 0 {
			params := line[ps:pe]
			if rs, re := valueOf(params, "requestId"); rs >= 0 {
				return splice(line, ps, pe, splice(params, rs, re, []byte(key)))
			}
		}
	}
	return line
}

// done takes the request answered under key out of those in flight.
func (sr *stdioRequests) done(key string) *stdioRequest {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	req := sr.pending[key]
	if req != nil {
		delete(sr.pending, key)
		if req.id != nil {
			delete(sr.swapped, string(req.id))
		}
	}
	if sr.idle != nil && len(sr.pending) == 0 {
		close(sr.idle)
		sr.idle = nil
	}
	return req
}

// stdioMessage is what inWatcher reads of a client's line.
type stdioMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
		Meta      json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// inWatcher reads the client's lines for mcp-go.
type inWatcher struct {
	sr      *stdioRequests
	r       *bufio.Reader
	buf     []byte
	methods *stdioMethods // serves Options.Methods
	ow      *outWriter    // for the front end's own answers
}

func (iw *inWatcher) Read(p []byte) (int, error) {
	for len(iw.buf) == 0 {
		line, long, err := iw.readLine()
		if long {
			iw.tooLong()
		} else if len(line) > 0 {
			line = iw.see(line)
		}
		if len(line) == 0 || long {
			if err != nil {
				return 0, err
			}
			continue // not for mcp-go
		}
		iw.buf = line
	}
	n := copy(p, iw.buf)
	iw.buf = iw.buf[n:]
	return n, nil
}

// readLine reads the client's next line, newline included. A line longer
// than the HTTP front end's body cap is read to its end and dropped: long
// is true and line nil. err is the reader's, for the last line too.
func (iw *inWatcher) readLine() (line []byte, long bool, err error) {
	limit := int(iw.sr.s.access.Load().BodyCap)
	for {
		frag, err := iw.r.ReadSlice('\n')
		if !long {
			if len(line)+len(frag) > limit+1 { // +1: the newline
				long, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, long, err
		}
	}
}

// tooLong answers a line longer than the body cap. Its id is unknown (the
// line was not kept), so the client learns of it as of a line that does
// not parse, and the gateway serves the next line.
func (iw *inWatcher) tooLong() {
	limit := iw.sr.s.access.Load().BodyCap
	iw.sr.s.log.Warn("stdio: a client message exceeds limits.http_body_cap and was dropped", "limit", limit)
	_ = iw.ow.writeLine([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":` + strconv.Quote(fmt.Sprintf(
		"Invalid Request: a message of more than %d bytes was dropped (limits.http_body_cap bounds a stdio line too); send smaller messages", limit)) + `}}`))
}

// see handles a client's line and returns what to hand mcp-go; nil for
// nothing.
func (iw *inWatcher) see(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	switch {
	case len(trimmed) == 0:
		return nil // a blank line between messages: nothing to answer
	case trimmed[0] == '[':
		_ = iw.ow.writeLine([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported; send one message per line"}}`))
		return nil
	}
	if kind := nonObject(trimmed); kind != "" {
		_ = iw.ow.writeLine(answer(json.RawMessage("null"), nil, notObjectError(kind)))
		return nil
	}
	var m stdioMessage
	if json.Unmarshal(line, &m) != nil {
		return line // mcp-go says what is wrong with it
	}
	if e := iw.refusal(trimmed); e != nil {
		_ = iw.ow.writeLine(e)
		return nil
	}
	if m.Method == string(mcp.MethodResourcesRead) {
		line, _, _ = iw.sr.s.standInRead(line)
	}
	switch {
	case len(m.ID) > 0 && string(m.ID) != "null" && m.Method != "":
		if meth, ok := iw.sr.s.opts.Methods[m.Method]; ok {
			iw.methods.serve(meth, m.Method, m.ID, line)
			return nil
		}
		if m.Method == string(mcp.MethodInitialize) {
			iw.sr.s.stdioCaps.Store(uint32(declaredCaps(line)))
		}
		req := &stdioRequest{}
		if rewrites(m.Method) {
			req.method = m.Method
			req.dreq = disclosure.Request{Profile: iw.sr.s.opts.StdioProfile}
			req.modern = mcp.IsModernProtocol(metaVersion(m.Params.Meta))
			if !req.modern {
				req.dreq.Session = stdioSession
			}
		}
		out := iw.sr.add(line, m.ID, req)
		if out == nil {
			_ = iw.ow.writeLine(answer(m.ID, nil, ErrStopping))
		}
		return out
	case m.Method == string(mcp.MethodNotificationCancelled) && len(m.Params.RequestID) > 0:
		return iw.sr.cancel(line, m.Params.RequestID)
	}
	return line
}

// refusal returns the front end's answer to a client's line (an object
// that decodes) that MCP does not allow, as the HTTP front end answers it
// (validity.go); nil when mcp-go is to have the line.
func (iw *inWatcher) refusal(line []byte) []byte {
	req, ok := parseRequest(line)
	if !ok {
		return nil
	}
	id := req.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if e := messageError(line, &req); e != nil {
		return answer(id, nil, e)
	}
	if !req.valid() || !hasValue(req.ID) {
		return nil
	}
	if e := argumentsError(&req); e != nil {
		return answer(id, nil, e)
	}
	if e := cursorError(&req); e != nil {
		return answer(id, nil, e)
	}
	return nil
}

// metaVersion is the protocol version a request's _meta names, or "".
func metaVersion(meta json.RawMessage) string {
	r := request{}
	r.Params.Meta = meta
	return r.protocolVersion()
}

// outWriter writes mcp-go's lines to the client, and the front end's.
type outWriter struct {
	sr     *stdioRequests
	w      io.Writer
	bufMu  sync.Mutex  // one Write at a time: mcp-go writes from several goroutines (answers, its own sampling requests)
	buf    []byte      // the part of a line not yet written (bufMu held)
	mu     sync.Mutex  // whole lines: mcp-go's and the extension methods'
	broken func(error) // told when a write fails: the client is gone
}

// writeLine writes one protocol line of the front end's own.
func (ow *outWriter) writeLine(msg []byte) error {
	ow.mu.Lock()
	defer ow.mu.Unlock()
	return ow.write(append(msg[:len(msg):len(msg)], '\n'))
}

// write writes whole lines to the client (ow.mu held). mcp-go only logs a
// failed write and reads on; the front end ends the connection instead.
func (ow *outWriter) write(b []byte) error {
	_, err := ow.w.Write(b)
	if err != nil && ow.broken != nil {
		ow.broken(err)
	}
	return err
}

func (ow *outWriter) Write(p []byte) (int, error) {
	ow.bufMu.Lock()
	defer ow.bufMu.Unlock()
	n := len(p)
	ow.buf = append(ow.buf, p...)
	for {
		i := bytes.IndexByte(ow.buf, '\n')
		if i < 0 {
			return n, nil
		}
		out, ok := ow.answer(ow.buf[:i])
		ow.buf = ow.buf[i+1:]
		if !ok {
			continue // the client cancelled the request
		}
		ow.mu.Lock()
		err := ow.write(append(out[:len(out):len(out)], '\n'))
		ow.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
}

// answer returns mcp-go's line as the client gets it; ok is false when
// it gets nothing.
func (ow *outWriter) answer(line []byte) (out []byte, ok bool) {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &env) != nil || len(env.ID) == 0 || env.Method != "" {
		// Not a response: a list_changed may be held back (startgate.go).
		return line, !ow.sr.s.heldBack(stdioSession, line)
	}
	req := ow.sr.done(string(env.ID))
	switch {
	case req == nil:
		return line, true
	case req.cancelled:
		return nil, false
	}
	// A passed error may answer any request a hook or handler fails
	// (resources/subscribe too); results are rewritten for req.method.
	out, _, changed := ow.sr.s.noResourceAnswer(line, req.method, req.modern)
	if !changed {
		out, _, changed = ow.sr.s.passedAnswer(line, req.modern)
	}
	if !changed && req.method != "" {
		out = ow.sr.s.rewrite(line, req.method, req.dreq)
	}
	if req.id != nil {
		out = withID(out, req.id)
	}
	return out, true
}

// withID returns the JSON-RPC message msg with id as its id.
func withID(msg, id []byte) []byte {
	if start, end := valueOf(msg, "id"); start >= 0 {
		return splice(msg, start, end, id)
	}
	return msg
}

// stdioCall is the sdk.Call of an extension method served over stdio:
// notifications are written between protocol lines.
type stdioCall struct {
	ow *outWriter
}

var _ sdk.Call = stdioCall{}

func (c stdioCall) Progress(sdk.Progress) error { return nil }

func (c stdioCall) Notify(n sdk.Notification) error {
	return c.ow.writeLine(notification(n.Method, n.Params))
}

func (c stdioCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "no client requests during an extension method"}
}

func (c stdioCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "no tool calls during an extension method"}
}

// stdioMethods runs extension methods for the stdio front end, each on its
// own goroutine, and waits for them when the client goes.
type stdioMethods struct {
	sr   *stdioRequests
	ctx  context.Context
	ow   *outWriter
	wg   sync.WaitGroup
	gone chan struct{} // closed when the client went: no waiting for the start
}

// serve runs m, the method named method, for the request with id in body.
// The client may cancel it.
func (sm *stdioMethods) serve(m Method, method string, id, body []byte) {
	ctx, cancel := context.WithCancel(sm.ctx)
	key := idKey(id)
	sm.sr.mu.Lock()
	stopping := sm.sr.stopping
	if !stopping {
		sm.sr.pending[key] = &stdioRequest{cancel: cancel, clientID: id}
	}
	sm.sr.mu.Unlock()
	if stopping {
		cancel()
		_ = sm.ow.writeLine(answer(id, nil, ErrStopping))
		return
	}
	sm.wg.Add(1)
	go func() {
		defer sm.wg.Done()
		defer cancel()
		if !sm.sr.s.awaitServing(ctx, method, sm.gone) {
			sm.sr.done(key)
			return // cancelled, or the client went while the gateway started
		}
		raw, err := m(ctx, requestParams(body), stdioCall{sm.ow})
		if req := sm.sr.done(key); req == nil || !req.cancelled {
			_ = sm.ow.writeLine(answer(id, raw, err))
		}
	}()
}

// idKey is a request id as mcp-go writes it in its answer: decoded as
// encoding/json decodes into any (a number as a float64) and encoded
// again. Short integers and plain strings are what they are.
func idKey(id []byte) string {
	if plainID(id) {
		return string(id)
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(id)
	}
	return string(b)
}

// plainID reports whether id is a string of printable ASCII that
// encoding/json writes as it is, or an integer of at most 15 digits (a
// float64 holds it exactly).
func plainID(id []byte) bool {
	if len(id) >= 2 && id[0] == '"' && id[len(id)-1] == '"' {
		for _, c := range id[1 : len(id)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// exactID reports whether id is an integer that mcp-go would answer with
// another value: one a float64 cannot hold exactly.
func exactID(id []byte) bool {
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) <= 15 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return idKey(id) != string(id)
}
