package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// answeredWhileStarting are the requests served at once while the gateway
// starts (Options.Serving is open): they read nothing of the catalog, so
// a client's handshake does not wait for a slow server. Every other
// request (tools/list, tools/call, resources/..., an extension method)
// waits, so that what it reads holds every source's first try.
var answeredWhileStarting = map[string]bool{
	string(mcp.MethodInitialize):     true,
	string(mcp.MethodPing):           true,
	string(mcp.MethodSetLogLevel):    true,
	string(mcp.MethodServerDiscover): true,
}

// awaitServing holds a request for method until the front end serves the
// catalog (Options.Serving is closed), ctx ends or gone (nil for never) is
// closed. It reports whether the request is to be served. Notifications
// and a client's answers (method "") never wait.
func (s *Server) awaitServing(ctx context.Context, method string, gone <-chan struct{}) bool {
	if s.serving() || method == "" || answeredWhileStarting[method] {
		return true
	}
	select {
	case <-s.opts.Serving:
		return true
	case <-ctx.Done():
		return false
	case <-gone:
		return false
	}
}

// holdWhileStarting is the mcp-go hook that holds the requests mcp-go
// serves (awaitServing); an error answers the request, whose client
// cancelled it or went away.
//
// It also notes a gated session's lists that passed (noteListing).
func (s *Server) holdWhileStarting(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if s.serving() && (!s.anyGated() || !bytes.Contains(raw, []byte("/list"))) {
		return nil
	}
	var req struct {
		Method string `json:"method"`
	}
	if !ok || json.Unmarshal(raw, &req) != nil {
		return nil // mcp-go says what is wrong with it
	}
	if !s.awaitServing(ctx, req.Method, nil) {
		return context.Cause(ctx)
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		s.noteListing(cs.SessionID(), req.Method)
	}
	return nil
}

// anyGated reports whether some session began before the gate opened and
// has a kind of list_changed held back.
func (s *Server) anyGated() bool {
	found := false
	s.gated.Range(func(_, _ any) bool { found = true; return false })
	return found
}

// serving reports whether the catalog is served (Options.Serving).
func (s *Server) serving() bool {
	if s.opts.Serving == nil {
		return true
	}
	select {
	case <-s.opts.Serving:
		return true
	default:
		return false
	}
}

// A client that initializes while the gateway starts would see every
// catalog change of the start (each server's first load) as list_changed,
// though it listed nothing yet: the lists it asks for wait at the gate,
// and are answered with the catalog as it is then. A list_changed tells a
// client that a list it holds is stale; such a client holds none, and one
// that came anyway would have it list again (and wait at the gate again).
// So a session that began before the gate opened gets no list_changed of
// a kind (tools, prompts, resources) sent before its first list of that
// kind passed the gate, and so read the catalog with the change in it:
// those are dropped on their way out. mcp-go queues a session's
// notifications and writes them when it can (at once over stdio, on the
// session's GET stream or with its next request over HTTP), so "sent
// before" is told by order: as the list passes the gate, a marker
// (listedMarker) joins the session's queue, and the list_changed of the
// kind that come out before it are dropped. (Over HTTP mcp-go may hand
// the queue to a request's response and the GET stream at once; a
// list_changed still queued when the gate opens may then come out after
// the marker, which costs the client one list.) Sessions that begin
// after the gate opened are not held back at all.

// listedMarker is the method of the marker notification; it never
// reaches a client.
const listedMarker = "notifications/skillgate-internal/listed"

// listChangedKinds are the list_changed notifications held back, by the
// index of their kind in gatedSession.
var listChangedKinds = map[string]int{
	string(mcp.MethodNotificationToolsListChanged):     0,
	string(mcp.MethodNotificationPromptsListChanged):   1,
	string(mcp.MethodNotificationResourcesListChanged): 2,
}

// listKinds are the list requests, by the index of their kind.
var listKinds = map[string]int{
	string(mcp.MethodToolsList):              0,
	string(mcp.MethodPromptsList):            1,
	string(mcp.MethodResourcesList):          2,
	string(mcp.MethodResourcesTemplatesList): 2,
}

// gatedSession is a session that began before the gate opened. Each
// array is by kind.
type gatedSession struct {
	marked [3]atomic.Bool // a list passed the gate and queued the marker
	listed [3]atomic.Bool // the marker came out: list_changed pass from then on
}

// noteSessionStart records a session that begins while the gate is shut.
func (s *Server) noteSessionStart(id string) {
	if !s.serving() {
		s.gated.Store(id, &gatedSession{})
	}
}

// noteListing records that session id's request for method passed the
// gate, before it reads the catalog: the first of a kind queues the
// marker (see above).
func (s *Server) noteListing(id, method string) {
	kind, ok := listKinds[method]
	if !ok || id == "" {
		return
	}
	v, ok := s.gated.Load(id)
	if !ok {
		return
	}
	g := v.(*gatedSession)
	if !g.marked[kind].CompareAndSwap(false, true) {
		return
	}
	if err := s.mcp.SendNotificationToSpecificClient(id, listedMarker, map[string]any{"kind": kind}); err != nil {
		g.listed[kind].Store(true) // no queue to wait for
	}
}

// heldBack reports whether msg, a message mcp-go writes to session id, is
// not to reach it: a marker (noted), or a list_changed that came out
// before the marker of its kind.
func (s *Server) heldBack(id string, msg []byte) bool {
	if id == "" {
		return false
	}
	v, gated := s.gated.Load(id) // markers too go only to gated sessions
	if !gated || !bytes.Contains(msg, []byte("list")) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Kind int `json:"kind"`
		} `json:"params"`
	}
	if !bytes.Contains(msg, []byte(listedMarker)) && !bytes.Contains(msg, []byte("list_changed")) ||
		json.Unmarshal(msg, &m) != nil || len(m.ID) > 0 {
		return false
	}
	if m.Method == listedMarker {
		if m.Params.Kind >= 0 && m.Params.Kind < 3 {
			g := v.(*gatedSession)
			g.listed[m.Params.Kind].Store(true)
			if g.listed[0].Load() && g.listed[1].Load() && g.listed[2].Load() {
				s.gated.Delete(id) // nothing left to hold back
			}
		}
		return true
	}
	kind, ok := listChangedKinds[m.Method]
	return ok && !v.(*gatedSession).listed[kind].Load()
}

// heldBackWriter is the ResponseWriter of a gated session's GET stream,
// which mcp-go writes: it drops the data lines of the list_changed held
// back (an SSE event without data is not dispatched).
type heldBackWriter struct {
	s       *Server
	w       http.ResponseWriter
	session string
	buf     []byte // a line not yet complete
}

func (hw *heldBackWriter) Header() http.Header         { return hw.w.Header() }
func (hw *heldBackWriter) WriteHeader(status int)      { hw.w.WriteHeader(status) }
func (hw *heldBackWriter) Unwrap() http.ResponseWriter { return hw.w }

func (hw *heldBackWriter) Write(p []byte) (int, error) {
	n := len(p)
	hw.buf = append(hw.buf, p...)
	for {
		i := bytes.IndexByte(hw.buf, '\n')
		if i < 0 {
			return n, nil
		}
		line := hw.buf[:i+1]
		data, isData := bytes.CutPrefix(line, []byte("data: "))
		if !isData || !hw.s.heldBack(hw.session, bytes.TrimRight(data, "\r\n")) {
			if _, err := hw.w.Write(line); err != nil {
				return 0, err
			}
		}
		hw.buf = hw.buf[i+1:]
	}
}

func (hw *heldBackWriter) Flush() {
	if f, ok := hw.w.(http.Flusher); ok {
		f.Flush()
	}
}
