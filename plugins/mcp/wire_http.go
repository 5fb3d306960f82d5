package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// httpWire adapts mcp-go's streamable HTTP transport to a wire (the legacy
// HTTP+SSE transport is sseWire's). Results stay raw; notification params and the
// params of server requests pass through mcp-go's decoding (maps), which
// keeps every field but not number precision beyond float64 or key order.
type httpWire struct {
	t    transport.Interface
	spec *Spec
	log  *slog.Logger
	h    wireHandlers

	ctx    context.Context // the transport's lifetime
	cancel context.CancelFunc
	http   *http.Transport // this wire's own connection pool

	death

	// open counts the requests in flight other than the listen stream;
	// ending, once set, is the wire's cause of death waiting for them to
	// end (see dieWhenIdle).
	idleMu sync.Mutex
	open   int
	ending error

	// probe is the ping running to learn whether the server is still
	// there after a request failed on the network (see serverGone).
	probeMu sync.Mutex
	probe   *probeRun
}

// probeRun is one ping of serverGone, shared by the requests that failed
// while it ran.
type probeRun struct {
	done chan struct{}
	gone error // set before done is closed
}

// probeTimeout bounds serverGone's ping. A server that does not answer it
// in time is not taken for gone: a hung server is the calls' timeouts'
// business, not a reason to cut the calls that are still running.
const probeTimeout = 5 * time.Second

// listenKey marks the context of a subscriptions/listen request.
type listenKey struct{}

// startHTTP creates and starts a streamable HTTP transport for spec.URL.
// listen opens the legacy standalone GET stream for notifications outside
// calls (2025-11-25 and older only).
func startHTTP(ctx context.Context, spec *Spec, listen bool, log *slog.Logger, h wireHandlers) (*httpWire, error) {
	w := &httpWire{spec: spec, log: log, h: h, death: death{ch: make(chan struct{})}}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	// A pool of its own, so that closing the wire closes its connections.
	w.http = http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{CheckRedirect: checkRedirect, Transport: &wireTransport{
		base: w.http, headers: spec.Headers, note: h.notification, lost: w.die,
		overflow: func(err error) { log.Warn("dropped an event of the server's stream", "err", err) },
		url:      redactURL(spec.URL),
	}}
	quiet := slog.New(debugOnly{log.Handler()})
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(spec.Headers), transport.WithHTTPLogger(quiet), transport.WithHTTPBasicClient(client)}
	if listen {
		// Deprecated only for 2026-07-28, which listen is never used with.
		//lint:ignore SA1019 the legacy GET stream is how 2025-11-25 servers send list_changed
		opts = append(opts, transport.WithContinuousListening())
	}
	t, err := transport.NewStreamableHTTP(spec.URL, opts...)
	if err != nil {
		w.cancel()
		return nil, err
	}
	w.t = t
	w.t.SetNotificationHandler(w.onNotification)
	if b, ok := w.t.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(w.onRequest)
	}
	// The transport keeps the context it starts with for its streams, so it
	// gets the wire's lifetime; ctx only bounds the wait.
	started := make(chan error, 1)
	go func() { started <- w.t.Start(w.ctx) }()
	select {
	case err := <-started:
		if err != nil {
			_ = w.close()
			return nil, fmt.Errorf("connect %s: %w", redactURL(spec.URL), redactErr(err))
		}
	case <-ctx.Done():
		_ = w.close()
		<-started
		return nil, ctx.Err()
	}
	return w, nil
}

func (w *httpWire) pid() int { return 0 }

// die marks the wire dead with cause (the first cause wins).
func (w *httpWire) die(cause error) { w.mark(redactErr(cause)) }

// enter counts a request in flight; once the wire is ending it refuses
// the request instead.
func (w *httpWire) enter() error {
	w.idleMu.Lock()
	defer w.idleMu.Unlock()
	if w.ending != nil {
		return fmt.Errorf("%w: %w", sdk.ErrUnavailable, w.ending)
	}
	w.open++
	return nil
}

// leave ends a request entered; the last one out of an ending wire
// kills it.
func (w *httpWire) leave() {
	w.idleMu.Lock()
	w.open--
	cause := w.ending
	if w.open > 0 {
		cause = nil
	}
	w.idleMu.Unlock()
	if cause != nil {
		w.die(cause)
	}
}

// dieWhenIdle kills the wire with cause once no request is in flight:
// at once when none is, else when the last one ends. Meanwhile the wire
// refuses new requests. It is for a failure of the listen stream, which
// says nothing of the POSTs still open.
func (w *httpWire) dieWhenIdle(cause error) {
	w.idleMu.Lock()
	if w.open > 0 {
		if w.ending == nil {
			w.ending = cause
		}
		w.idleMu.Unlock()
		return
	}
	w.idleMu.Unlock()
	w.die(cause)
}

func (w *httpWire) setProtocolVersion(v string) {
	if c, ok := w.t.(transport.HTTPConnection); ok {
		c.SetProtocolVersion(v)
	}
}

func (w *httpWire) roundTrip(ctx context.Context, req *rpcRequest) (*rpcResponse, error) {
	if err := w.cause(); err != nil {
		return nil, &unsentError{err: err}
	}
	listen := ctx.Value(listenKey{}) != nil
	if !listen {
		if err := w.enter(); err != nil {
			return nil, &unsentError{err: err}
		}
		defer w.leave()
	}
	// The notifications on this request's response stream are its own.
	ctx = context.WithValue(ctx, streamKey{}, true)
	// mcp-go decodes an error's data into an any; the bytes it came as are
	// kept here (see rawErrorData).
	raw := &rawErrorData{}
	ctx = context.WithValue(ctx, rawErrorKey{}, raw)
	ex := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, ex)
	r := transport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(req.id), Method: req.method, Header: req.header}
	if len(req.params) > 0 {
		r.Params = req.params
	}
	resp, err := w.t.SendRequest(ctx, r)
	ex.mu.Lock()
	posted, rejected, tooBig, status := ex.posted, ex.rejected, ex.tooBig, ex.status
	ex.mu.Unlock()
	switch {
	case rejected, err != nil && !posted && errors.Is(err, transport.ErrSessionTerminated):
		// Refused for its session, or never sent for it: the server
		// never processed it.
		if cause := w.cause(); cause != nil {
			return nil, &unsentError{err: cause}
		}
	case tooBig:
		return nil, fmt.Errorf("%s: the server's answer to %s is over the %d-byte limit on one message; the gateway dropped it",
			redactURL(w.spec.URL), req.method, maxMessageBytes)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if notJSONRPC(err) && posted {
			return nil, ex.notMCP(w.spec, req.method, err)
		}
		raw := redactErr(err)
		err = explainHTTP(w.spec, raw)
		switch {
		case fatalHTTP(err) && listen:
			// The calls in flight may still get their answers on their
			// own POSTs (a server that stops drains them).
			w.dieWhenIdle(err)
			return nil, fmt.Errorf("%w: %w", sdk.ErrUnavailable, err)
		case networkFailure(err):
			if gone := w.serverGone(); gone != nil {
				w.die(gone)
				return nil, gone
			}
			return nil, fmt.Errorf("%s: the POST of %s failed on the network (%s), but the server still answers: only this request failed, and it may have run there; retry it if that is safe",
				redactURL(w.spec.URL), req.method, innermost(raw))
		case fatalHTTP(err):
			w.die(err)
		}
		return nil, err
	}
	if resp.Error == nil && len(resp.Result) == 0 && status >= 400 {
		ex.mu.Lock()
		head := ex.head
		ex.mu.Unlock()
		e := statusProblem(&ConnectError{URL: redactURL(w.spec.URL), Err: fmt.Errorf("POST answered HTTP %d", status)}, status, head)
		e.Problem = w.spec.redact(e.Problem)
		return nil, e
	}
	if resp.Error != nil {
		e := &sdk.RPCError{Code: int64(resp.Error.Code), Message: resp.Error.Message}
		if resp.Error.Data != nil {
			if e.Data = raw.data(e); e.Data == nil {
				e.Data, _ = json.Marshal(resp.Error.Data)
			}
		}
		return &rpcResponse{err: e}, nil
	}
	if len(resp.Result) == 0 {
		return &rpcResponse{err: &sdk.RPCError{Code: sdk.CodeInternalError, Message: "the upstream's response has neither result nor error"}}, nil
	}
	return &rpcResponse{result: resp.Result}, nil
}

func (w *httpWire) notify(ctx context.Context, method string, params json.RawMessage) error {
	n := mcpgo.JSONRPCNotification{JSONRPC: mcpgo.JSONRPC_VERSION, Notification: mcpgo.Notification{Method: method}}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &n.Params); err != nil {
			return err
		}
	}
	err := w.t.SendNotification(ctx, n)
	if err != nil && ctx.Err() == nil {
		err = explainHTTP(w.spec, redactErr(err))
		switch {
		case networkFailure(err):
			if gone := w.serverGone(); gone != nil {
				w.die(gone)
			}
		case fatalHTTP(err):
			w.die(err)
		}
	}
	return err
}

// serverGone tells, after a request failed on the network, whether the
// server is gone: it returns why (the ping's failure, which says more
// than the request's: "connection refused" rather than the EOF of a
// kept-alive connection the server closed), or nil when it is there. Over streamable HTTP each request has a POST of its own,
// and one failed POST says little about the others: a proxy reset one
// connection, or the server closed a kept-alive connection as it was
// reused. So the wire pings the server on a new request, and only when
// that fails on the network too is the server gone and the wire torn
// down. Any answer to the ping (a result, a JSON-RPC error such as a
// 2026-07-28 server's method not found, an HTTP error status) shows the
// server is there. The requests that fail while a ping runs share it.
func (w *httpWire) serverGone() error {
	w.probeMu.Lock()
	p := w.probe
	if p == nil {
		p = &probeRun{done: make(chan struct{})}
		w.probe = p
		go func() {
			p.gone = w.ping()
			w.probeMu.Lock()
			w.probe = nil
			w.probeMu.Unlock()
			close(p.done)
		}()
	}
	w.probeMu.Unlock()
	<-p.done
	return p.gone
}

// ping sends a ping for serverGone and returns its failure on the
// network (or the wire's cause of death, if it died meanwhile); nil when
// the server answered, or did not in time.
func (w *httpWire) ping() error {
	ctx, cancel := context.WithTimeout(w.ctx, probeTimeout)
	defer cancel()
	_, err := w.t.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION,
		ID: mcpgo.NewRequestId("skillgate-probe"), Method: "ping"})
	if cause := w.cause(); cause != nil {
		return cause
	}
	switch {
	case err == nil:
		return nil
	case w.ctx.Err() != nil:
		return errors.New("upstream connection closed")
	case ctx.Err() != nil:
		return nil // no answer in time: not known to be gone
	}
	if err = explainHTTP(w.spec, redactErr(err)); fatalHTTP(err) {
		return err
	}
	return nil
}

// onNotification takes the notifications mcp-go reads itself: those of
// the standalone GET stream and of the legacy SSE transport, and those of a
// response stream that streamNotes did not read (an event over holdMax).
func (w *httpWire) onNotification(n mcpgo.JSONRPCNotification) {
	w.h.notification(context.Background(), n.Method, notificationParams(n.Params))
}

// notificationParams re-encodes params decoded by mcp-go, without the empty
// _meta its decoder adds.
func notificationParams(p mcpgo.NotificationParams) json.RawMessage {
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	if p.Meta == nil && len(p.AdditionalFields) == 0 {
		return nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return b
}

// onRequest answers a server request. mcp-go hands one that came on a
// response stream the context of the request that opened it (marked with
// streamKey in roundTrip), and one on the standalone GET stream the
// transport's own: conn.onRequest tells them apart.
func (w *httpWire) onRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	var params json.RawMessage
	if req.Params != nil {
		b, err := json.Marshal(req.Params)
		if err != nil {
			return nil, err
		}
		params = b
	}
	res, err := w.h.request(ctx, req.Method, params)
	if err != nil {
		e := asRPCError(err)
		var data any
		if len(e.Data) > 0 {
			data = e.Data
		}
		return transport.NewJSONRPCErrorResponse(req.ID, int(e.Code), e.Message, data), nil
	}
	if len(res) == 0 {
		res = json.RawMessage(`{}`)
	}
	return transport.NewJSONRPCResultResponse(req.ID, res), nil
}

func (w *httpWire) close() error {
	w.die(errors.New("upstream connection closed"))
	err := w.t.Close()
	w.cancel()
	w.http.CloseIdleConnections()
	return err
}

// wireTransport is the wire's http.RoundTripper. It puts the spec's
// headers on every request (mcp-go leaves them off the session's DELETE),
// bounds each answer, or each event of an event stream, to
// maxMessageBytes, reads the notifications out of response streams
// (readNotes), and notices a server that has forgotten the session
// (restarted, or expired it): with the 404 the spec asks for, or with 400,
// as the TypeScript SDK's servers say it. The wire then dies and the
// source starts a new session; mcp-go's client would fail every request
// after a 400 for good, and after a 404 on its standing GET stream would
// wait for the next request to find out.
type wireTransport struct {
	base     http.RoundTripper
	headers  map[string]string
	note     func(ctx context.Context, method string, params json.RawMessage)
	lost     func(error)
	overflow func(error) // an event of the standing GET stream was too big
	url      string      // the server's, masked

	// opened is the session the standing GET stream last opened on: a
	// 404 to the stream means the session is lost only after it opened
	// (before, that the server offers no stream).
	opened atomic.Pointer[string]
}

func (t *wireTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = t.withHeaders(req)
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	post := req.Method == http.MethodPost
	if ex != nil && post {
		ex.mu.Lock()
		ex.posted = true
		ex.mu.Unlock()
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if session := req.Header.Get(transport.HeaderKeySessionID); session != "" {
		if why, lost := t.sessionLost(req, resp, session); lost {
			if ex != nil && post {
				ex.mu.Lock()
				ex.rejected = true
				ex.mu.Unlock()
			}
			t.lost(fmt.Errorf("%s: %w (%s answered %s)", t.url, ErrSessionLost, req.Method, why))
			return resp, nil
		}
	}
	if ex != nil && post {
		ex.mu.Lock()
		ex.status, ex.ctype = resp.StatusCode, resp.Header.Get("Content-Type")
		ex.mu.Unlock()
	}
	capBody(resp, ex, t.overflow, t.url)
	readNotes(req, resp, t.note)
	keepErrorData(req, resp)
	return resp, nil
}

// withHeaders returns req with the spec's headers, cloned when it lacks
// one of them.
func (t *wireTransport) withHeaders(req *http.Request) *http.Request {
	for k, v := range t.headers {
		if req.Header.Get(k) != v {
			req = req.Clone(req.Context())
			for k, v := range t.headers {
				req.Header.Set(k, v)
			}
			return req
		}
	}
	return req
}

// sessionLost reports whether resp, to req made on session, says the
// server no longer knows the session, and how it said so.
func (t *wireTransport) sessionLost(req *http.Request, resp *http.Response, session string) (string, bool) {
	switch resp.StatusCode {
	case http.StatusOK:
		if req.Method == http.MethodGet {
			t.opened.Store(&session)
		}
	case http.StatusNotFound:
		if req.Method != http.MethodGet {
			return "HTTP 404", true
		}
		if opened := t.opened.Load(); opened != nil && *opened == session {
			return "HTTP 404 to the stream that was open on it", true
		}
	case http.StatusBadRequest:
		if msg, ok := sessionRejected(resp); ok {
			return "HTTP 400: " + msg, true
		}
	}
	return "", false
}

// exchangeKey carries a request's *exchange in its context.
type exchangeKey struct{}

// exchange is what the wire's RoundTripper saw of the HTTP exchanges of
// one request, for roundTrip to explain how it ended.
type exchange struct {
	mu       sync.Mutex
	posted   bool   // the POST went out
	rejected bool   // the server refused the POST for its session
	status   int    // the POST's HTTP status
	ctype    string // its Content-Type
	head     []byte // the start of its body, as read
	tooBig   bool   // its answer, or an event of it, outgrew maxMessageBytes
}

// headMax bounds exchange.head.
const headMax = 200

// notMCP is the error of a POST whose answer is not JSON-RPC: the URL is
// some other web service's, or not its MCP endpoint.
func (ex *exchange) notMCP(spec *Spec, method string, err error) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	problem := fmt.Sprintf("the answer to %s is not JSON-RPC (HTTP %d, Content-Type %q", method, ex.status, ex.ctype)
	if b := bodySummary(ex.head); b != "" {
		problem += ": " + b
	}
	return &ConnectError{URL: redactURL(spec.URL), Status: ex.status, Err: err, Problem: spec.redact(problem + ")"),
		Hint: "is url the server's MCP endpoint? check its path (often /mcp; /sse for legacy SSE servers)"}
}

// notJSONRPC reports whether err is mcp-go's for an answer that is not a
// JSON-RPC message.
func notJSONRPC(err error) bool {
	m := err.Error()
	return strings.Contains(m, "response should contain RPC id") || strings.Contains(m, "unexpected content type") ||
		strings.Contains(m, "failed to decode response")
}

// capBody bounds resp's body to maxMessageBytes: a JSON answer as a
// whole, an event stream event by event. It keeps the start of the body
// in ex, and marks ex when the bound is hit; a too big event of the
// standing GET stream (no ex) goes to overflow.
func capBody(resp *http.Response, ex *exchange, overflow func(error), url string) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &cappedBody{ReadCloser: resp.Body, events: mt == "text/event-stream", max: maxMessageBytes, ex: ex,
		over: func() error {
			err := fmt.Errorf("%s: a message of the server is over the %d-byte limit", url, maxMessageBytes)
			if ex != nil {
				ex.mu.Lock()
				ex.tooBig = true
				ex.mu.Unlock()
			} else {
				overflow(err)
			}
			return err
		}}
}

// cappedBody fails a body, or an event of an event stream, that outgrows
// max bytes.
type cappedBody struct {
	io.ReadCloser
	events bool // count per SSE event, not per body
	max    int
	ex     *exchange
	over   func() error

	n     int  // bytes of the body, or of the event so far
	solid bool // the current line has bytes other than CR (events)
	err   error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	if ex := b.ex; ex != nil && n > 0 {
		ex.mu.Lock()
		if len(ex.head) < headMax {
			ex.head = append(ex.head, p[:min(n, headMax-len(ex.head))]...)
		}
		ex.mu.Unlock()
	}
	if !b.events {
		b.n += n
	} else {
		for chunk := p[:n]; len(chunk) > 0; {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				b.n += len(chunk)
				b.solid = b.solid || len(bytes.Trim(chunk, "\r")) > 0
				break
			}
			line := chunk[:i]
			b.n += i + 1
			if !b.solid && len(bytes.Trim(line, "\r")) == 0 {
				b.n = 0 // a blank line ends the event
			}
			b.solid = false
			chunk = chunk[i+1:]
		}
	}
	if b.n > b.max {
		b.err = b.over()
		return 0, b.err
	}
	return n, err
}

// rawErrorKey carries a request's *rawErrorData in its context.
type rawErrorKey struct{}

// rawErrorData holds the bytes of the JSON-RPC error a request's answer
// carried, so that the error reaches the client as the upstream sent it:
// mcp-go decodes its data into an any, and encoding that again loses
// number precision beyond float64 (and spelling, like 1.50) and key order.
// A plain JSON answer is kept while it is small (errorBodyMax); an SSE
// stream's error event is kept by sseNotes (see keepError).
type rawErrorData struct {
	mu   sync.Mutex
	msg  []byte // the error's answer: a JSON body, or an SSE event's data
	over bool   // a JSON body outgrew errorBodyMax
}

// errorBodyMax bounds how much of a plain JSON answer is kept in case it
// is an error. Errors are small; results, which may be large, outgrow it
// and stop being copied.
const errorBodyMax = 16 << 10

// keep records msg, an answer that may be an error.
func (r *rawErrorData) keep(msg []byte) {
	r.mu.Lock()
	r.msg = append(r.msg[:0], msg...)
	r.mu.Unlock()
}

// data returns the raw data of e as the answer kept carried it; nil when
// none was kept, or the kept one is not e.
func (r *rawErrorData) data(e *sdk.RPCError) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over || len(r.msg) == 0 {
		return nil
	}
	var m struct {
		Error *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(r.msg, &m) != nil || m.Error == nil || m.Error.Code != e.Code || m.Error.Message != e.Message || len(m.Error.Data) == 0 {
		return nil
	}
	return m.Error.Data
}

// keepErrorData makes a plain JSON answer of a request that carries a
// *rawErrorData keep its bytes there, up to errorBodyMax, as mcp-go reads
// them.
func keepErrorData(req *http.Request, resp *http.Response) {
	raw, ok := req.Context().Value(rawErrorKey{}).(*rawErrorData)
	if !ok {
		return
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return
	}
	resp.Body = &errorBody{ReadCloser: resp.Body, raw: raw}
}

// errorBody copies what is read of a JSON answer into a rawErrorData.
type errorBody struct {
	io.ReadCloser
	raw *rawErrorData
}

func (b *errorBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if r := b.raw; n > 0 {
		r.mu.Lock()
		if !r.over {
			if len(r.msg)+n > errorBodyMax {
				r.over, r.msg = true, nil
			} else {
				r.msg = append(r.msg, p[:n]...)
			}
		}
		r.mu.Unlock()
	}
	return n, err
}

// keepError records the data of an SSE event of a request's response
// stream (sseNotes) when it is a JSON-RPC error answer.
func keepError(ctx context.Context, data []byte) {
	raw, ok := ctx.Value(rawErrorKey{}).(*rawErrorData)
	if !ok || len(data) > errorBodyMax || !bytes.Contains(data, []byte(`"error"`)) {
		return
	}
	raw.keep(data)
}

// sessionRejected reads a 400 response's body (and puts it back) and
// reports whether it is a JSON-RPC error about the session.
func sessionRejected(resp *http.Response) (string, bool) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	if err != nil {
		return "", false
	}
	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil || e.Error == nil || !strings.Contains(strings.ToLower(e.Error.Message), "session") {
		return "", false
	}
	return e.Error.Message, true
}

// fatalHTTP reports whether err means the connection is gone (rather than
// one request failing): the network failed, the session ended, or the
// transport is closed.
func fatalHTTP(err error) bool {
	var ue *url.Error
	var ne net.Error
	switch {
	case errors.Is(err, transport.ErrSessionTerminated), errors.Is(err, transport.ErrTransportClosed):
		return true
	case errors.As(err, &ue), errors.As(err, &ne):
		return true
	}
	return false
}

// networkFailure reports whether err, fatal by fatalHTTP, is a failure of
// the network (connection refused or reset, a broken pipe) rather than the
// end of the session or of the transport, which are certain.
func networkFailure(err error) bool {
	return fatalHTTP(err) && !errors.Is(err, transport.ErrSessionTerminated) && !errors.Is(err, transport.ErrTransportClosed)
}

// debugOnly is the handler of mcp-go's transport logger: what it logs
// ("listening to server forever", a failed GET stream retried every
// second while a server is down) is its own business, and what matters
// reaches the executor as errors, which say it once. Its records are kept
// at debug level.
type debugOnly struct{ h slog.Handler }

func (d debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugOnly) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler { return debugOnly{d.h.WithAttrs(attrs)} }
func (d debugOnly) WithGroup(name string) slog.Handler       { return debugOnly{d.h.WithGroup(name)} }
