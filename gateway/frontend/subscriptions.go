package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/internal/keylock"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Resource subscriptions: resources/subscribe of 2025-11-25 and older
// sessions, and the resourceSubscriptions of a 2026-07-28
// subscriptions/listen stream. mcp-go answers both itself; the front end
// also subscribes the source that lists the resource (or a template it
// matches), once per URI however many clients subscribe, and unsubscribes
// it when the last of them unsubscribes or ends (a stream ends with its
// request). The source's notifications/resources/updated then goes to
// those clients only. A URI no source lists is acknowledged and goes
// nowhere; so is one the client's endpoint (a profile) does not serve: its
// client must not tell it from one that does not exist.

// subscriptions records which sessions subscribed to which URIs.
type subscriptions struct {
	locks keylock.Locks // per URI: forwarding and recording take turns
	seq   atomic.Uint64 // names subscriptions/listen streams

	mu      sync.Mutex
	byURI   map[string]map[string]bool // URI -> subscriber (session id, or stream key)
	bySess  map[string]map[string]bool // subscriber -> URIs
	streams map[string]server.ClientSession
}

// unsubscribeTimeout bounds an unsubscribe the front end sends on its own
// (a session ended).
const unsubscribeTimeout = 10 * time.Second

// onRequest is mcp-go's request-initialization hook. It forwards a legacy
// session's resources/subscribe and resources/unsubscribe to the source
// before mcp-go acknowledges them (a subscribe the source refuses fails
// the request with the source's reason), and the resources a 2026-07-28
// subscriptions/listen stream asks for, for as long as the stream lasts.
func (s *Server) onRequest(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok || !bytes.Contains(raw, []byte(`"resources/`)) && !bytes.Contains(raw, []byte(`"subscriptions/listen"`)) {
		return nil
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			URI           string `json:"uri"`
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	cs := server.ClientSessionFromContext(ctx)
	if json.Unmarshal(raw, &req) != nil || cs == nil {
		return nil // mcp-go says what is wrong with it
	}
	// mcp-go tells the eras apart after this hook: the request says.
	modern := mcp.IsModernProtocol(req.Params.Meta.Version)
	switch {
	case req.Method == string(mcp.MethodResourcesSubscribe) && !modern && req.Params.URI != "":
		return s.subscribeError(s.subscribe(ctx, cs.SessionID(), req.Params.URI, s.newCall(ctx, nil)))
	case req.Method == string(mcp.MethodResourcesUnsubscribe) && !modern && req.Params.URI != "":
		s.unsubscribe(ctx, cs.SessionID(), req.Params.URI)
	case req.Method == "subscriptions/listen" && modern && len(req.Params.Notifications.ResourceSubscriptions) > 0:
		return s.listen(ctx, cs, req.Params.Notifications.ResourceSubscriptions)
	}
	return nil
}

// subscribeError is the error a legacy resources/subscribe fails with:
// the source's JSON-RPC error as it is, else an internal error saying
// what failed. (mcp-go would answer a hook's plain error as an invalid
// request.)
func (s *Server) subscribeError(err error) error {
	var re *sdk.RPCError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return s.passError(re)
	}
	return s.passError(&sdk.RPCError{Code: sdk.CodeInternalError, Message: err.Error()})
}

// listen subscribes a subscriptions/listen stream to uris until its
// request ends. The stream's session gets the updates (mcp-go tags them
// with the stream's subscription id).
func (s *Server) listen(ctx context.Context, cs server.ClientSession, uris []string) error {
	key := "listen:" + strconv.FormatUint(s.subs.seq.Add(1), 10)
	s.subs.mu.Lock()
	if s.subs.streams == nil {
		s.subs.streams = map[string]server.ClientSession{}
	}
	s.subs.streams[key] = cs
	s.subs.mu.Unlock()
	end := func() {
		s.endSubscriptions(key)
		s.subs.mu.Lock()
		delete(s.subs.streams, key)
		s.subs.mu.Unlock()
	}
	for _, uri := range uris {
		if err := s.subscribe(ctx, key, uri, quietCall{}); err != nil {
			end()
			return fmt.Errorf("subscribing to %q: %w", uri, err)
		}
	}
	context.AfterFunc(ctx, end)
	return nil
}

// deliverUpdate sends a notifications/resources/updated to the sessions
// and streams subscribed to its URI.
func (s *Server) deliverUpdate(uri string, params map[string]any) {
	for _, id := range s.subscribers(uri) {
		s.subs.mu.Lock()
		stream := s.subs.streams[id]
		s.subs.mu.Unlock()
		if stream == nil {
			if err := s.mcp.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationResourceUpdated), params); err != nil {
				s.log.Debug("resource update not delivered", "session", id, "uri", uri, "err", err)
			}
			continue
		}
		n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationResourceUpdated), Params: mcp.NotificationParams{AdditionalFields: params}}}
		select {
		case stream.NotificationChannel() <- n:
		default:
			s.log.Warn("resource update dropped: the subscription stream is full", "uri", uri)
		}
	}
}

// subscribe records that session subscribed to uri, subscribing the source
// first if no session had, with call as that request's link to the client.
// A resource the request's endpoint does not serve is treated as one no
// source lists.
func (s *Server) subscribe(ctx context.Context, session, uri string, call sdk.Call) error {
	unlock := s.subs.locks.Lock(uri)
	defer unlock()
	it, listed := resourceItem(s.snap.Load(), uri)
	listed = listed && s.Disclosure().Serves(s.discRequest(ctx), it)
	s.subs.mu.Lock()
	known, first := s.subs.bySess[session][uri], len(s.subs.byURI[uri]) == 0
	s.subs.mu.Unlock()
	if known {
		return nil
	}
	if !listed {
		// No source lists it (for this endpoint): acknowledged, as mcp-go
		// does, with no source to tell (a server may accept URIs it does
		// not list, but which server is anyone's guess). Refusing it
		// (-32002) was tried and undone: the MCP conformance suite's
		// resources-subscribe scenarios subscribe to a URI the server
		// does not list and expect success.
		s.log.Debug("subscription to a resource no source lists", "uri", uri)
		return nil
	}
	if first {
		if err := s.forwardSubscription(ctx, it, uri, true, call); err != nil {
			return err
		}
	}
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if s.subs.byURI == nil {
		s.subs.byURI, s.subs.bySess = map[string]map[string]bool{}, map[string]map[string]bool{}
	}
	addTo(s.subs.byURI, uri, session)
	addTo(s.subs.bySess, session, uri)
	return nil
}

// unsubscribe forgets that session subscribed to uri, unsubscribing the
// source when it was the last session that had.
func (s *Server) unsubscribe(ctx context.Context, session, uri string) {
	unlock := s.subs.locks.Lock(uri)
	defer unlock()
	s.subs.mu.Lock()
	if !s.subs.bySess[session][uri] {
		s.subs.mu.Unlock()
		return
	}
	removeFrom(s.subs.byURI, uri, session)
	removeFrom(s.subs.bySess, session, uri)
	last := len(s.subs.byURI[uri]) == 0
	s.subs.mu.Unlock()
	if !last {
		return
	}
	it, ok := resourceItem(s.snap.Load(), uri)
	if !ok {
		return // gone meanwhile: nothing left to undo there
	}
	if err := s.forwardSubscription(ctx, it, uri, false, s.newCall(ctx, nil)); err != nil {
		s.log.Warn("unsubscribing the source of a resource", "uri", uri, "err", err)
	}
}

// endSubscriptions unsubscribes whatever session still had subscribed.
func (s *Server) endSubscriptions(session string) {
	s.subs.mu.Lock()
	var uris []string
	for uri := range s.subs.bySess[session] {
		uris = append(uris, uri)
	}
	s.subs.mu.Unlock()
	if len(uris) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	for _, uri := range uris {
		s.unsubscribe(ctx, session, uri)
	}
}

// subscribers returns the sessions subscribed to uri.
func (s *Server) subscribers(uri string) []string {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	out := make([]string, 0, len(s.subs.byURI[uri]))
	for id := range s.subs.byURI[uri] {
		out = append(out, id)
	}
	return out
}

// resourceItem finds the resource uri, or the template it matches.
func resourceItem(snap *catalog.Snapshot, uri string) (*catalog.Item, bool) {
	if it, ok := snap.Resource(uri); ok {
		return it, true
	}
	return snap.MatchTemplate(uri)
}

// forwardSubscription sends resources/subscribe (on) or
// resources/unsubscribe of uri to the source of it; call carries what the
// source sends meanwhile.
func (s *Server) forwardSubscription(ctx context.Context, it *catalog.Item, uri string, on bool, call sdk.Call) error {
	method := mcp.MethodResourcesSubscribe
	if !on {
		method = mcp.MethodResourcesUnsubscribe
	}
	params, _ := json.Marshal(map[string]string{"uri": uri})
	if _, err := s.router.Call(ctx, it, string(method), params, call); err != nil {
		return fmt.Errorf("%s %s: %w", method, uri, err)
	}
	return nil
}

// quietCall is the sdk.Call of the resources/subscribe a 2026-07-28
// subscriptions/listen stream makes the gateway send: it runs in mcp-go's
// request hook, before mcp-go writes the stream's acknowledgement, which
// must be the stream's first message. What the source sends meanwhile (a
// log line, progress) goes nowhere, and it may ask the client nothing:
// the request named no progress token, and its _meta log level applies to
// what the stream carries, not to the gateway's own bookkeeping.
type quietCall struct{}

var _ sdk.Call = quietCall{}

// Progress implements sdk.Call: dropped.
func (quietCall) Progress(sdk.Progress) error { return nil }

// Notify implements sdk.Call: dropped.
func (quietCall) Notify(sdk.Notification) error { return nil }

// Request implements sdk.Call: refused.
func (quietCall) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "the gateway does not forward " + method + " while it subscribes a subscriptions/listen stream"}
}

// CallTool implements sdk.Call: refused.
func (quietCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "no tool calls while the gateway subscribes a subscriptions/listen stream"}
}

func addTo(m map[string]map[string]bool, key, member string) {
	if m[key] == nil {
		m[key] = map[string]bool{}
	}
	m[key][member] = true
}

func removeFrom(m map[string]map[string]bool, key, member string) {
	delete(m[key], member)
	if len(m[key]) == 0 {
		delete(m, key)
	}
}
