package frontend

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/jsonscan"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/disclosure"
)

// rawListKey marks a request whose list the front end splices in itself,
// so mcp-go is spared building (and encoding) it.
type rawListKey struct{}

// rawListFilter empties the tool list mcp-go builds for a marked request.
func rawListFilter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if ctx.Value(rawListKey{}) != nil {
		return nil
	}
	return tools
}

// rawPromptFilter does the same for prompts.
func rawPromptFilter(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	if ctx.Value(rawListKey{}) != nil {
		return nil
	}
	return prompts
}

// request is what the front end reads of a single JSON-RPC request, in
// one decode: enough to route it and, for tools/call, to serve it.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Cursor    *string         `json:"cursor"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
		Task      json.RawMessage `json:"task"`
		// A 2026-07-28 retry of a call that asked for input (SEP-2322).
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	} `json:"params"`
}

// protocolVersion is the protocol version a request names in its _meta
// (2026-07-28 requests do), or "".
func (r *request) protocolVersion() string {
	if !bytes.Contains(r.Params.Meta, []byte("io.modelcontextprotocol/protocolVersion")) {
		return ""
	}
	var m struct {
		V string `json:"io.modelcontextprotocol/protocolVersion"`
	}
	_ = json.Unmarshal(r.Params.Meta, &m)
	return m.V
}

// parseRequest reads body as encoding/json would decode it into request,
// with one validity check and one walk of the members it needs instead of
// a reflective decode: this runs on every request. It reports false where
// that decode would fail (invalid JSON, not an object, a member of the
// wrong type). encoding/json also takes a key that differs from a member's
// name in letter case only ("Method", "JSONRPC"), the last one given
// winning, and so does mcp-go: a body with such a key is decoded by
// encoding/json itself, so that the front end and mcp-go never read one
// request two ways.
func parseRequest(body []byte) (request, bool) {
	var req request
	if !json.Valid(body) {
		return req, false
	}
	if string(bytes.TrimSpace(body)) == "null" {
		return req, true // as encoding/json decodes null into a struct
	}
	ok, twin := true, false
	isObject := jsonscan.Members(body, func(key, value []byte, _, _ int) {
		switch string(key) {
		case "jsonrpc":
			if string(value) == `"2.0"` {
				req.JSONRPC = "2.0" // without a copy: every request has it
				return
			}
			req.JSONRPC, ok = jsonString(value, ok)
		case "id":
			req.ID = value
		case "method":
			req.Method, ok = jsonString(value, ok)
		case "params":
			if string(value) == "null" {
				return
			}
			isObject := jsonscan.Members(value, func(key, value []byte, _, _ int) {
				switch string(key) {
				case "cursor":
					if string(value) == "null" {
						req.Params.Cursor = nil
						return
					}
					var c string
					c, ok = jsonString(value, ok)
					req.Params.Cursor = &c
				case "name":
					req.Params.Name, ok = jsonString(value, ok)
				case "arguments":
					req.Params.Arguments = value
				case "_meta":
					req.Params.Meta = value
				case "task":
					req.Params.Task = value
				case "inputResponses":
					req.Params.InputResponses = value
				case "requestState":
					req.Params.RequestState = value
				default:
					twin = twin || caseTwin(key, paramKeys)
				}
			})
			ok = ok && isObject
		default:
			twin = twin || caseTwin(key, topKeys)
		}
	})
	if twin && isObject {
		var dec request
		return dec, json.Unmarshal(body, &dec) == nil
	}
	return req, isObject && ok
}

// The keys parseRequest reads, at the top and in params.
var (
	topKeys   = [][]byte{[]byte("jsonrpc"), []byte("id"), []byte("method"), []byte("params")}
	paramKeys = [][]byte{[]byte("cursor"), []byte("name"), []byte("arguments"), []byte("_meta"), []byte("task"), []byte("inputResponses"), []byte("requestState")}
)

// caseTwin reports whether key is one of names in other letter case, as
// encoding/json matches keys (Unicode case folding: "ſ" is an "s").
func caseTwin(key []byte, names [][]byte) bool {
	for _, n := range names {
		if bytes.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// valid reports whether req is a JSON-RPC 2.0 message as mcp-go reads it:
// mcp-go answers any other "jsonrpc" with its Invalid Request error.
func (r *request) valid() bool { return r.JSONRPC == "2.0" }

// plain reports whether req is a valid request whose id is one MCP allows,
// a string or an integer: the only requests the front end answers itself.
// mcp-go takes a null id for a notification's, and echoes other ids as it
// decodes them (1e3 as 1000): those requests are left to it.
func (r *request) plain() bool {
	if !r.valid() || len(r.ID) == 0 {
		return false
	}
	switch c := r.ID[0]; {
	case c == '"':
		return true
	case c == '-' || c >= '0' && c <= '9':
		return !bytes.ContainsAny(r.ID, ".eE")
	}
	return false
}

// jsonString decodes a JSON string value; ok turns false (and stays so)
// when the value is not a string.
func jsonString(value []byte, ok bool) (string, bool) {
	if string(value) == "null" {
		return "", ok // as encoding/json leaves a string
	}
	if len(value) < 2 || value[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(value, '\\') < 0 {
		return string(value[1 : len(value)-1]), ok
	}
	var s string
	if json.Unmarshal(value, &s) != nil {
		return "", false
	}
	return s, ok
}

// serveList answers a whole-list request directly from the snapshot's
// bytes: a known 2025-11-25-or-older session (drained) or a plain
// 2026-07-28 request, for which the members mcp-go adds are appended.
func (s *Server) serveList(w http.ResponseWriter, req request, dreq disclosure.Request, modern bool) {
	list := s.listJSON(s.snap.Load(), req.Method, dreq)
	key := listKeys[req.Method]
	head := make([]byte, 0, 64+len(req.ID)+len(key))
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, req.ID...)
	head = append(head, `,"result":{"`...)
	head = append(head, key...)
	head = append(head, `":`...)
	tail := []byte("}}\n")
	if modern {
		tail = make([]byte, 0, len(s.modernMeta)+80)
		tail = append(tail, `,"_meta":`...)
		tail = append(tail, s.modernMeta...)
		tail = append(tail, `,"cacheScope":"private","resultType":"complete","ttlMs":0}}`+"\n"...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(list)+len(tail)))
	w.WriteHeader(http.StatusOK)
	if len(list) > listCopyMax {
		// A big list goes out from the snapshot's bytes as they are: a copy
		// per request (hundreds of KB for a thousand tools, times the
		// requests in flight) is what the gateway's memory would peak on.
		_, _ = w.Write(head)
		_, _ = w.Write(list)
		_, _ = w.Write(tail)
		return
	}
	// A small one is copied into one buffer, for one write.
	bp := listBufs.Get().(*[]byte)
	out := append(append(append((*bp)[:0], head...), list...), tail...)
	_, _ = w.Write(out)
	*bp = out
	listBufs.Put(bp)
}

// listCopyMax is the largest list serveList copies into one buffer.
const listCopyMax = 64 << 10

// listBufs are serveList's buffers for small lists.
var listBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// sessionTracker wraps an initialize answer to learn the session id mcp-go
// issued.
type sessionTracker struct {
	http.ResponseWriter
	s    *Server
	caps clientCaps // what the client declared for server requests
	// owner is the fingerprint of the initialize's bearer token.
	owner [sha256.Size]byte
	// stored is set once the tracker recorded the session; it then holds
	// the place its initialize reserved (reserveSession).
	stored bool
}

func (st *sessionTracker) WriteHeader(status int) {
	if status == http.StatusOK {
		st.track()
	}
	st.ResponseWriter.WriteHeader(status)
}

func (st *sessionTracker) Write(p []byte) (int, error) {
	st.track()
	return st.ResponseWriter.Write(p)
}

// track records the session mcp-go issued. It starts as not drained: the
// session may be told of list changes made while it initialized.
func (st *sessionTracker) track() {
	if id := st.Header().Get("Mcp-Session-Id"); id != "" {
		now := time.Now()
		sess := &session{id: id, caps: st.caps, owner: st.owner}
		sess.use.touch(now)
		if _, loaded := st.s.sessions.LoadOrStore(id, sess); !loaded {
			st.stored = true
			st.s.expireSessions(now)
		}
	}
}

// drained records that a request of session id went through mcp-go, which
// delivered whatever it held for the session up to notification count n.
func (s *Server) drained(id string, n uint64) {
	if id == "" {
		return
	}
	if v, ok := s.sessions.Load(id); ok {
		v.(*session).drained.Store(n)
	}
}

func (st *sessionTracker) Flush() {
	if f, ok := st.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// answerEdit is what serveRewritten changes in an answer of mcp-go's.
type answerEdit struct {
	// method is the request's method, whose answer is rewritten to the
	// sources' bytes (raw.go); "" rewrites none.
	method string
	dreq   disclosure.Request // who asked
	modern bool               // a 2026-07-28 request
	// call, when not nil, is the request in flight: once its client
	// cancelled it, the response is dropped (see inflightCall).
	call *inflightCall
	// id, when not nil, is the request's id as the client wrote it, which
	// mcp-go answers with another (see exactID): the response gets it back.
	id json.RawMessage
}

// serveRewritten runs next and edits its answer on the way out: a JSON
// answer is buffered and edited whole; an SSE answer streams through, its
// notifications untouched and as soon as they come, and its result event
// edited.
func (s *Server) serveRewritten(w http.ResponseWriter, r *http.Request, next http.Handler, edit answerEdit) {
	if edit.method == string(mcp.MethodToolsList) || edit.method == string(mcp.MethodPromptsList) {
		r = r.WithContext(context.WithValue(r.Context(), rawListKey{}, true))
	}
	ctx, d := withDelivery(r.Context())
	rw := &rewriter{s: s, w: w, d: d, answerEdit: edit}
	next.ServeHTTP(rw, r.WithContext(ctx))
	rw.finish()
}

// isResponse reports whether a JSON-RPC message is a response (a result or
// an error, not a request or notification).
func isResponse(msg []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "" && len(m.ID) > 0
}

// isNotification reports whether an SSE data payload is a notification.
func isNotification(data []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && m.Method != "" && len(m.ID) == 0
}

// rewriter is the ResponseWriter of a rewritten answer.
type rewriter struct {
	s *Server
	w http.ResponseWriter
	d *delivery
	answerEdit

	status int
	sse    bool
	buf    bytes.Buffer // JSON: the whole body; SSE: the current partial line
}

func (rw *rewriter) Header() http.Header { return rw.w.Header() }

func (rw *rewriter) WriteHeader(status int) {
	if rw.status != 0 {
		return
	}
	rw.status = status
	rw.sse = strings.HasPrefix(rw.w.Header().Get("Content-Type"), "text/event-stream")
	if rw.sse {
		rw.w.WriteHeader(status)
	}
}

func (rw *rewriter) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	if !rw.sse {
		return rw.buf.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			rw.buf.Write(p)
			break
		}
		rw.buf.Write(p[:i+1])
		if err := rw.emitLine(); err != nil {
			return 0, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// emitLine writes the buffered SSE line, rewriting a data line that holds
// the answer.
func (rw *rewriter) emitLine() error {
	line := rw.buf.Bytes()
	if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
		data = bytes.TrimRight(data, "\r\n")
		if rw.call.wasCancelled() && isResponse(data) {
			rw.buf.Reset() // the client cancelled the request
			return nil
		}
		if rw.s.heldBack(rw.dreq.Session, data) {
			rw.buf.Reset() // a list_changed held back (startgate.go)
			return nil
		}
		if out, _, changed := rw.edit(data); changed {
			line = append(append([]byte("data: "), out...), '\n')
		} else if isNotification(data) {
			_, err := rw.w.Write(line)
			rw.buf.Reset()
			if f, ok := rw.w.(http.Flusher); ok {
				f.Flush()
			}
			rw.d.noteWritten()
			return err
		}
	}
	_, err := rw.w.Write(line)
	rw.buf.Reset()
	return err
}

// edit returns the message msg of mcp-go's answer as the client gets it,
// and whether that differs from msg; status, when not 0, is the HTTP
// status that answer needs.
func (rw *rewriter) edit(msg []byte) (out []byte, status int, changed bool) {
	out, status, changed = rw.s.noResourceAnswer(msg, rw.method, rw.modern)
	if !changed {
		out, status, changed = rw.s.passedAnswer(msg, rw.modern)
	}
	if !changed {
		out = rw.s.rewrite(msg, rw.method, rw.dreq)
		changed = !bytes.Equal(out, msg)
	}
	if rw.id != nil && isResponse(out) {
		out, changed = withID(out, rw.id), true
	}
	return out, status, changed
}

func (rw *rewriter) Flush() {
	if f, ok := rw.w.(http.Flusher); ok && rw.sse {
		f.Flush()
	}
}

// finish writes a buffered JSON answer, or what is left of an SSE one.
func (rw *rewriter) finish() {
	if rw.status == 0 {
		return
	}
	if rw.sse {
		if rw.buf.Len() > 0 {
			_ = rw.emitLine()
		}
		rw.Flush()
		return
	}
	body := rw.buf.Bytes()
	if rw.call.wasCancelled() && isResponse(body) {
		endWithoutResponse(rw.w)
		return
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '{' {
		if out, status, changed := rw.edit(trimmed); changed {
			body = append(out, '\n')
			if status != 0 {
				rw.status = status
			}
		}
	}
	rw.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.w.WriteHeader(rw.status)
	_, _ = rw.w.Write(body)
}
