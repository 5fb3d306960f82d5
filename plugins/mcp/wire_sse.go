package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/jsonscan"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// sseWire speaks the legacy HTTP+SSE transport (MCP 2024-11-05): a GET
// opens an event stream whose first "endpoint" event names the URL to POST
// messages to; everything the server sends comes on that one stream.
//
// mcp-go's SSE client is not used: it takes a server's request on the
// stream for a response (and drops it, or hands it to a pending call of
// the same id), so sampling, elicitation and roots could not work, and it
// reads lines without a bound and params into maps. Here a server's
// request is answered by a POST, messages stay raw, and lines are bounded
// by maxMessageBytes.
type sseWire struct {
	log     *slog.Logger
	h       wireHandlers
	base    *url.URL
	headers map[string]string
	client  *http.Client
	pool    *http.Transport // this wire's own connection pool

	endpoint *url.URL // set once, before startSSE returns
	version  atomic.Pointer[string]

	ctx    context.Context // the wire's lifetime: the stream and every POST
	cancel context.CancelFunc

	calls calls

	death
	closing  atomic.Bool
	readDone chan struct{}
}

// sseAnswerTimeout bounds the POST of an answer to a server's request.
const sseAnswerTimeout = 30 * time.Second

// startSSE opens spec.URL's event stream and waits for its endpoint event,
// at most until ctx ends.
func startSSE(ctx context.Context, spec *Spec, log *slog.Logger, h wireHandlers) (*sseWire, error) {
	base, err := url.Parse(spec.URL)
	if err != nil {
		return nil, err
	}
	w := &sseWire{
		log: log, h: h, base: base, headers: spec.Headers,
		death: death{ch: make(chan struct{})}, readDone: make(chan struct{}),
	}
	w.pool = http.DefaultTransport.(*http.Transport).Clone()
	w.client = &http.Client{Transport: w.pool, CheckRedirect: checkRedirect}
	w.ctx, w.cancel = context.WithCancel(context.Background())

	// The stream lives as long as the wire; ctx bounds only this wait.
	stop := context.AfterFunc(ctx, w.cancel)
	defer stop()
	fail := func(err error) (*sseWire, error) {
		w.cancel()
		w.pool.CloseIdleConnections()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	req, err := http.NewRequestWithContext(w.ctx, http.MethodGet, spec.URL, nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	w.setHeaders(req.Header)
	resp, err := w.client.Do(req)
	if err != nil {
		return fail(explainHTTP(spec, err))
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		_ = resp.Body.Close()
		err := statusError(spec, http.MethodGet, resp, body)
		var ce *ConnectError
		if errors.As(err, &ce) && (ce.Status == http.StatusBadRequest || ce.Status == http.StatusMethodNotAllowed || ce.Status == http.StatusNotAcceptable) {
			// What a streamable HTTP endpoint answers a GET without a session.
			ce.Hint = "is url a streamable HTTP endpoint? Then set type: http (or transport: streamable-http), or leave it out: skillgate tries streamable HTTP first"
		}
		return fail(err)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		_ = resp.Body.Close()
		return fail(&ConnectError{URL: redactURL(spec.URL), Status: resp.StatusCode,
			Problem: fmt.Sprintf("GET answered with Content-Type %q, not an event stream", resp.Header.Get("Content-Type")),
			Hint:    "is url the server's legacy SSE endpoint (often ending in /sse)? For a streamable HTTP server, leave transport unset or set it to streamable-http"})
	}
	endpoint := make(chan struct{})
	go w.readLoop(resp.Body, endpoint)
	select {
	case <-endpoint:
	case <-w.dead():
		_ = w.close()
		return fail(w.cause())
	case <-ctx.Done():
		_ = w.close()
		return nil, ctx.Err()
	}
	if !stop() {
		_ = w.close()
		return nil, ctx.Err() // ctx ended just as the endpoint came
	}
	return w, nil
}

func (w *sseWire) pid() int { return 0 }

// die marks the wire dead with cause (the first cause wins) and ends the
// stream and every POST: a server that lost the session may never answer
// them (server-everything's does not).
func (w *sseWire) die(cause error) {
	if w.mark(redactErr(cause)) {
		w.cancel()
	}
}

func (w *sseWire) setProtocolVersion(v string) { w.version.Store(&v) }

// setHeaders puts the spec's headers and the protocol version on a request.
func (w *sseWire) setHeaders(h http.Header) {
	if v := w.version.Load(); v != nil && *v != "" {
		h.Set("MCP-Protocol-Version", *v)
	}
	for k, v := range w.headers {
		h.Set(k, v)
	}
}

func (w *sseWire) roundTrip(ctx context.Context, req *rpcRequest) (*rpcResponse, error) {
	if err := w.cause(); err != nil {
		return nil, &unsentError{err: err}
	}
	ch := make(chan *rpcResponse, 1)
	w.calls.add(req.id, ch)
	defer w.calls.remove(req.id)
	msg := append([]byte(`{"jsonrpc":"2.0","id":`), strconv.AppendInt(nil, req.id, 10)...)
	msg = append(msg, `,"method":`...)
	msg = jsonscan.AppendString(msg, req.method)
	if len(req.params) > 0 {
		if !json.Valid(req.params) {
			return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "params are not valid JSON"}
		}
		msg = append(append(msg, `,"params":`...), req.params...)
	}
	msg = append(msg, '}')
	if err := w.post(ctx, msg, req.header); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-w.dead():
		select {
		case resp := <-ch:
			return resp, nil
		default:
		}
		return nil, w.cause()
	}
}

func (w *sseWire) notify(ctx context.Context, method string, params json.RawMessage) error {
	msg := append([]byte(`{"jsonrpc":"2.0","method":`), jsonscan.AppendString(nil, method)...)
	if len(params) > 0 {
		msg = append(append(msg, `,"params":`...), params...)
	}
	return w.post(ctx, append(msg, '}'))
}

// post sends one message to the endpoint. The answer to a request comes on
// the stream; the POST's own answer only says the message was taken. A
// failure of the network, or a server that no longer knows the session,
// kills the wire (the source reconnects); other refusals fail the message.
func (w *sseWire) post(ctx context.Context, msg []byte, extra ...http.Header) error {
	if err := w.cause(); err != nil {
		return err
	}
	// The wire's end ends the POST too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(w.ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint.String(), bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range extra {
		for k, vs := range h {
			req.Header[k] = vs
		}
	}
	w.setHeaders(req.Header)
	resp, err := w.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && w.ctx.Err() == nil {
			return ctx.Err() // the caller gave up
		}
		if w.ctx.Err() != nil {
			return w.causeOr(errors.New("upstream connection closed"))
		}
		err = explainHTTP(&Spec{URL: w.endpoint.String(), Headers: w.headers}, err)
		w.die(err)
		return w.cause()
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = statusError(&Spec{URL: w.endpoint.String(), Headers: w.headers}, http.MethodPost, resp, body)
	if resp.StatusCode == http.StatusNotFound ||
		resp.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(string(body)), "session") {
		// The server restarted, or dropped the session: start over. The
		// server did not take the message.
		w.die(fmt.Errorf("%w: %w", ErrSessionLost, err))
		return &unsentError{err: w.cause()}
	}
	return err
}

// causeOr returns the wire's cause of death, or err while it lives.
func (w *sseWire) causeOr(err error) error {
	if c := w.cause(); c != nil {
		return c
	}
	return err
}

// readLoop reads the event stream until it ends. endpoint is closed when
// the endpoint event came.
func (w *sseWire) readLoop(body io.ReadCloser, endpoint chan struct{}) {
	defer close(w.readDone)
	defer body.Close()
	lr := &lineReader{r: bufio.NewReaderSize(body, 64<<10), max: maxMessageBytes}
	var event string
	var data []byte
	hasData, tooBig := false, false
	for {
		line, size, skipped, err := lr.next()
		if err != nil {
			switch {
			case w.closing.Load():
				w.die(errors.New("upstream connection closed"))
			case errors.Is(err, io.EOF):
				// The session lives as long as the stream.
				w.die(lostSession(errors.New("the server ended the SSE stream, and the session with it")))
			default:
				w.die(fmt.Errorf("the SSE stream broke: %w", err))
			}
			return
		}
		if skipped {
			tooBig = true
			w.log.Warn("upstream sent an SSE line over the size limit; skipped its event", "bytes", size, "limit", maxMessageBytes,
				"start", truncate(string(line), 120))
			if id, ok := sniffResponseID(line[min(len(line), len("data:")):]); ok {
				w.calls.deliver(id, &rpcResponse{err: &sdk.RPCError{Code: sdk.CodeInternalError,
					Message: fmt.Sprintf("%s: the server's answer is over the %d-byte limit on one message; the gateway dropped it", redactURL(w.base.String()), maxMessageBytes)}})
			}
			continue
		}
		field := bytes.TrimRight(line, "\r\n")
		if len(field) == 0 { // the end of an event
			if hasData && !tooBig {
				w.dispatch(event, data, endpoint)
			}
			event, data, hasData, tooBig = "", data[:0], false, false
			continue
		}
		name, value, _ := bytes.Cut(field, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > maxMessageBytes {
				tooBig, data = true, data[:0]
			}
		}
	}
}

// dispatch handles one event of the stream.
func (w *sseWire) dispatch(event string, data []byte, endpoint chan struct{}) {
	switch event {
	case "endpoint":
		if w.endpoint != nil {
			return // said once; a repeat changes nothing
		}
		u, err := w.base.Parse(strings.TrimSpace(string(data)))
		if err != nil || u.Scheme != w.base.Scheme || u.Host != w.base.Host {
			w.die(fmt.Errorf("the server named %q as the endpoint to post to, which is not on %s://%s; refusing it",
				truncate(string(data), 200), w.base.Scheme, w.base.Host))
			return
		}
		w.endpoint = u
		close(endpoint)
	case "", "message":
		if w.endpoint == nil {
			w.log.Warn("upstream sent a message before its endpoint event; ignored it", "data", truncate(string(data), 200))
			return
		}
		m, ok := parseEnvelope(bytes.TrimSpace(data))
		if !ok {
			w.log.Warn("upstream sent an SSE message that is not JSON-RPC; ignored it", "data", truncate(string(data), 200))
			return
		}
		if !route(m, w.h, w) {
			w.log.Warn("upstream sent a JSON object that is not JSON-RPC; ignored it", "data", truncate(string(data), 200))
		}
	default:
		w.log.Debug("upstream sent an SSE event of an unknown type; ignored it", "event", event)
	}
}

// answer delivers a response to its request.
func (w *sseWire) answer(m envelope) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		w.log.Warn("upstream answered with an id it was never sent; ignored it", "id", truncate(string(m.ID), 80))
		return
	}
	if w.calls.deliver(id, responseOf(m)) {
		return
	}
	if w.calls.late(id) {
		w.log.Debug("upstream answered a request the gateway no longer waits for; ignored it", "id", id)
		return
	}
	w.log.Warn("upstream answered with an id it was never sent; ignored it", "id", id)
}

// serve answers one request of the server with a POST.
func (w *sseWire) serve(id json.RawMessage, method string, params json.RawMessage) {
	res, err := w.h.request(w.ctx, method, params)
	msg := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if err != nil {
		b, _ := json.Marshal(asRPCError(err))
		msg = append(append(msg, `,"error":`...), b...)
	} else {
		if len(res) == 0 || !json.Valid(res) {
			res = json.RawMessage(`{}`)
		}
		msg = append(append(msg, `,"result":`...), res...)
	}
	ctx, cancel := context.WithTimeout(w.ctx, sseAnswerTimeout)
	defer cancel()
	if err := w.post(ctx, append(msg, '}')); err != nil && w.cause() == nil {
		w.log.Warn("answering the upstream's request failed", "method", method, "err", err)
	}
}

// close ends the stream and every POST, and waits for the reader.
func (w *sseWire) close() error {
	w.closing.Store(true)
	w.cancel()
	w.die(errors.New("upstream connection closed"))
	<-w.readDone
	w.pool.CloseIdleConnections()
	return nil
}
