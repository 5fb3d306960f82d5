package frontend

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/internal/jsonscan"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Multi round-trip requests (SEP-2322). A 2026-07-28 client has no stream
// a server could send requests on: a server that needs input mid-call
// (sampling, elicitation, roots) answers with resultType "input_required",
// the requests, and an opaque requestState; the client sends the same
// request again with its answers (inputResponses) and that state.
//
// Sources never speak it to the front end: what they need from the client
// arrives as sdk.Call.Request while the call runs (the mcp executor turns
// an upstream's input_required into such requests). So for a 2026-07-28
// client that declared a capability, a tools/call runs on a goroutine of
// its own; when it asks for input, the exchange answers input_required and
// the call waits, parked under a fresh requestState, until the client's
// retry brings the answers and takes the call's next turn: more input, or
// its result.

const (
	// parkTimeout bounds the wait for a client's retry: a call whose
	// client never comes back is cancelled (a person may be answering an
	// elicitation; the call's own request timeout applies too). Tests
	// shorten it per Server (roundTripLimits).
	parkTimeout = 10 * time.Minute
	// keepFinished is how long a result that came while the call was
	// parked waits for the retry that collects it.
	keepFinished = time.Minute
)

// roundTripLimits are a Server's parkTimeout and keepFinished.
type roundTripLimits struct{ park, keep time.Duration }

// maxRoundTrips bounds the requests of calls waiting for their clients.
const maxRoundTrips = 1024

// roundTrip is a 2026-07-28 request (tools/call, prompts/get,
// resources/read) that may ask its client for input. It is the sdk.Call of
// that request's call to its source.
type roundTrip struct {
	s      *Server
	state  string // the requestState its client echoes back
	name   string // the tool, prompt or resource URI a retry must name
	caps   clientCaps
	cancel context.CancelFunc

	mu     sync.Mutex
	ex     sdk.Call             // the exchange attached, nil while parked
	busy   bool                 // an exchange has claimed the next turn
	unsent []*inputAsk          // asks the client has not seen yet
	sent   map[string]*inputAsk // asks sent, by id, waiting for answers
	seq    int
	wake   chan struct{} // 1-buffered: a new ask or the end, for the attached exchange
	done   bool
	raw    json.RawMessage // the call's result (or err), once done
	err    error
	expiry *time.Timer // while parked: cancels the call, or forgets a finished one
	listed bool        // registered in Server.roundTrips
}

// inputAsk is one request of the call for its client.
type inputAsk struct {
	id     string
	method string
	params json.RawMessage
	answer chan json.RawMessage // 1-buffered
}

var _ sdk.Call = (*roundTrip)(nil)

// modernCaps returns the capabilities for server-to-client requests that a
// 2026-07-28 request's _meta declares.
func modernCaps(meta json.RawMessage) clientCaps {
	var caps clientCaps
	jsonscan.Members(meta, func(key, value []byte, _, _ int) {
		if string(key) != "io.modelcontextprotocol/clientCapabilities" {
			return
		}
		jsonscan.Members(value, func(key, value []byte, _, _ int) {
			if string(value) != "null" {
				caps |= capNamed(string(key))
			}
		})
	})
	return caps
}

// capNamed returns the capability of that name, or none.
func capNamed(name string) clientCaps {
	for _, c := range capabilityOf {
		if c.name == name {
			return c.cap
		}
	}
	return 0
}

// errNoTurn means the exchange's client went away before the call's next
// turn: the call is cancelled and there is nothing to answer.
var errNoTurn = errors.New("the client went away")

// newRoundTrip runs a call (run, with the round trip as its sdk.Call) on a
// goroutine of its own, for the client of the request from (see
// clientLife): a stdio client's call ends when that client goes.
func (s *Server) newRoundTrip(from context.Context, name string, caps clientCaps, ex sdk.Call, run func(context.Context, sdk.Call) (json.RawMessage, error)) *roundTrip {
	var b [16]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithCancel(clientLife(from))
	rt := &roundTrip{s: s, state: "sg1." + hex.EncodeToString(b[:]), name: name, caps: caps, cancel: cancel,
		sent: map[string]*inputAsk{}, wake: make(chan struct{}, 1), ex: ex, busy: true}
	go func() {
		defer cancel()
		raw, err := run(ctx, rt)
		rt.finish(raw, err)
	}()
	return rt
}

// resume finds the call a retry names by its requestState, attaches the
// retry's exchange (ex) and hands the call the answers (inputResponses: an
// object of answers by input request id). Its error is the retry's
// invalid-params answer.
func (s *Server) resume(state, name string, inputResponses json.RawMessage, ex sdk.Call) (*roundTrip, error) {
	fail := func(msg string) (*roundTrip, error) {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: msg}
	}
	v, ok := s.roundTrips.Load(state)
	if !ok {
		return fail("requestState " + strconv.Quote(state) + " names no call waiting for input here (it ended, it waited too long, or another gateway replica holds it): send the request again without requestState")
	}
	rt := v.(*roundTrip)
	if name != rt.name {
		return fail("requestState " + strconv.Quote(state) + " belongs to a call of " + rt.name + ", not " + name)
	}
	var answers map[string]json.RawMessage
	if hasValue(inputResponses) && json.Unmarshal(inputResponses, &answers) != nil {
		return fail("inputResponses must be an object of answers by input request id")
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.busy {
		return fail("requestState " + strconv.Quote(state) + " is being answered by another request")
	}
	rt.busy, rt.ex = true, ex // before the answers: the call may go on at once
	for id, a := range answers {
		if ask := rt.sent[id]; ask != nil {
			delete(rt.sent, id)
			ask.answer <- a
		}
	}
	return rt, nil
}

// startRoundTrip serves the first exchange of a fast-path call that may
// ask its client for input.
func (s *Server) startRoundTrip(w http.ResponseWriter, r *http.Request, req *request, token json.RawMessage, caps clientCaps, p *fastPlan) {
	plan := *p
	fc := &fastCall{s: s, w: w, token: token, ctx: r.Context(), gate: modernGate(req.Params.Meta)}
	rt := s.newRoundTrip(r.Context(), req.Params.Name, caps, fc, func(ctx context.Context, call sdk.Call) (json.RawMessage, error) {
		return s.runPlan(ctx, &plan, call)
	})
	rt.serve(r.Context(), req.ID, fc)
}

// resumeRoundTrip serves a client's retry on the fast path.
func (s *Server) resumeRoundTrip(w http.ResponseWriter, r *http.Request, req *request, token json.RawMessage) {
	fc := &fastCall{s: s, w: w, token: token, ctx: r.Context(), gate: modernGate(req.Params.Meta)}
	var state string
	rt, err := (*roundTrip)(nil), error(&sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "requestState must be the string an input_required result gave"})
	if json.Unmarshal(req.Params.RequestState, &state) == nil {
		rt, err = s.resume(state, req.Params.Name, req.Params.InputResponses, fc)
	}
	if err != nil {
		fc.finish(answer(req.ID, nil, err))
		return
	}
	rt.serve(r.Context(), req.ID, fc)
}

// serve answers the HTTP exchange of request id, attached as fc, with the
// call's next turn.
func (rt *roundTrip) serve(ctx context.Context, id json.RawMessage, fc *fastCall) {
	raw, err := rt.next(ctx)
	if errors.Is(err, errNoTurn) {
		return
	}
	fc.finish(answer(id, raw, err))
}

// next waits, for the exchange attached (a new call's first, or a retry's
// through resume; it receives the progress and notifications the call
// sends meanwhile), for the call's next turn: its result
// (with the members a 2026-07-28 result carries), or an input_required
// result asking for every request not yet answered; the call is then
// parked until a retry names it. If ctx ends first (the client went away),
// the call is cancelled and next returns errNoTurn.
func (rt *roundTrip) next(ctx context.Context) (json.RawMessage, error) {
	rt.mu.Lock()
	if rt.expiry != nil {
		rt.expiry.Stop()
		rt.expiry = nil
	}
	rt.mu.Unlock()
	rt.poke()
	for {
		select {
		case <-rt.wake:
		case <-ctx.Done():
			rt.mu.Lock()
			rt.ex, rt.busy = nil, false
			rt.mu.Unlock()
			rt.cancel()
			rt.forget()
			return nil, errNoTurn
		}
		rt.mu.Lock()
		if rt.done {
			raw, err := rt.raw, rt.err
			rt.ex, rt.busy = nil, false
			rt.mu.Unlock()
			rt.forget()
			if err == nil {
				raw = rt.s.modernResult(raw)
			}
			return raw, err
		}
		if len(rt.unsent) == 0 && len(rt.sent) == 0 {
			rt.mu.Unlock()
			continue
		}
		requests := make([]member, 0, len(rt.unsent)+len(rt.sent))
		for _, ask := range rt.unsent {
			rt.sent[ask.id] = ask
		}
		rt.unsent = nil
		for _, ask := range rt.sent {
			// params is always there, {} when the source sent none
			// (server-everything's roots/list has none): the Go SDK
			// (v1.8.0) decodes every input request's params and fails
			// the call on a missing one ("unexpected end of JSON input").
			params := ask.params
			if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
				params = []byte("{}")
			}
			m := []member{{"method", encode(ask.method)}, {"params", params}}
			requests = append(requests, member{ask.id, insertMembers([]byte("{}"), m)})
		}
		slices.SortFunc(requests, func(a, b member) int { return strings.Compare(a.key, b.key) })
		rt.ex, rt.busy = nil, false
		if !rt.listed {
			rt.listed = true
			rt.s.roundTrips.Store(rt.state, rt)
		}
		rt.expiry = time.AfterFunc(rt.s.rtLimits.park, rt.cancel)
		rt.mu.Unlock()
		return insertMembers([]byte("{}"), []member{
			{"resultType", []byte(`"input_required"`)},
			{"inputRequests", insertMembers([]byte("{}"), requests)},
			{"requestState", encode(rt.state)},
			{"_meta", rt.s.modernMeta},
		}), nil
	}
}

// poke wakes the attached exchange, if it is not awake already.
func (rt *roundTrip) poke() {
	select {
	case rt.wake <- struct{}{}:
	default:
	}
}

// finish records the call's end. Parked, the result waits keepFinished
// for the retry that collects it.
func (rt *roundTrip) finish(raw json.RawMessage, err error) {
	rt.mu.Lock()
	rt.done, rt.raw, rt.err = true, raw, err
	if rt.ex == nil && rt.listed {
		if rt.expiry != nil {
			rt.expiry.Stop()
		}
		rt.expiry = time.AfterFunc(rt.s.rtLimits.keep, rt.forget)
	}
	rt.mu.Unlock()
	rt.poke()
}

// forget drops the call from the calls waiting for their clients.
func (rt *roundTrip) forget() {
	rt.s.roundTrips.CompareAndDelete(rt.state, rt)
}

// Progress implements sdk.Call: it reaches the exchange attached, if any.
func (rt *roundTrip) Progress(p sdk.Progress) error {
	if ex := rt.attached(); ex != nil {
		return ex.Progress(p)
	}
	return nil
}

// Notify implements sdk.Call.
func (rt *roundTrip) Notify(n sdk.Notification) error {
	if ex := rt.attached(); ex != nil {
		return ex.Notify(n)
	}
	return nil
}

func (rt *roundTrip) attached() sdk.Call {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.ex
}

// Request implements sdk.Call: the request becomes an input request of
// the call's next answer, and the client's retry brings the result.
func (rt *roundTrip) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c, ok := capabilityOf[method]
	if !ok {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: "the gateway does not forward " + method + " to clients"}
	}
	if rt.caps&c.cap == 0 {
		if method == "roots/list" {
			return json.RawMessage(`{"roots":[]}`), nil
		}
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound,
			Message: "the client did not declare the " + c.name + " capability that " + method + " needs"}
	}
	if n := rt.s.parked.Add(1); n > maxRoundTrips {
		rt.s.parked.Add(-1)
		return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: "the gateway has too many calls waiting for their clients' input; try again later"}
	}
	defer rt.s.parked.Add(-1)
	rt.mu.Lock()
	rt.seq++
	ask := &inputAsk{id: "i" + strconv.Itoa(rt.seq), method: method, params: params, answer: make(chan json.RawMessage, 1)}
	rt.unsent = append(rt.unsent, ask)
	rt.mu.Unlock()
	rt.poke()
	select {
	case a := <-ask.answer:
		if len(a) == 0 || string(a) == "null" {
			return nil, &sdk.RPCError{Code: sdk.CodeInternalError, Message: method + ": the client's inputResponses held no answer for it"}
		}
		return a, nil
	case <-ctx.Done():
		rt.drop(ask)
		return nil, ctx.Err()
	}
}

// drop takes back an ask whose caller gave up.
func (rt *roundTrip) drop(ask *inputAsk) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.sent, ask.id)
	for i, a := range rt.unsent {
		if a == ask {
			rt.unsent = append(rt.unsent[:i], rt.unsent[i+1:]...)
			break
		}
	}
}

// CallTool implements sdk.Call.
func (rt *roundTrip) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return rt.s.newCall(ctx, nil).CallTool(ctx, name, args)
}

// callSource sends a request that mcp-go dispatched to one of the front
// end's handlers to the item's source: as a round trip for a 2026-07-28
// client that may be asked for input (see modernTurn), else directly.
// name is what the client named (the tool, prompt or resource URI).
func (s *Server) callSource(ctx context.Context, it *catalog.Item, method, name string, params json.RawMessage, meta *mcp.Meta, mrt mcp.MultiRoundTripParams, token mcp.ProgressToken) (json.RawMessage, error) {
	run := func(ctx context.Context, call sdk.Call) (json.RawMessage, error) {
		return s.router.Call(ctx, it, method, params, call)
	}
	if raw, done, err := s.modernTurn(ctx, name, meta, mrt, token, run); done {
		return raw, err
	}
	return run(ctx, s.newCall(ctx, token))
}

// modernTurn is the round trip of a 2026-07-28 request that mcp-go
// dispatched to one of the front end's handlers (tools/call, prompts/get
// or resources/read of a stdio client, or a request the HTTP fast path
// leaves to mcp-go): a retry naming a requestState gets its call's next
// turn, and so does a new call of a client that declared sampling,
// elicitation or roots (run starts it). done is false for anything else,
// which runs as before. name is what a retry must name again (the tool,
// prompt or resource URI); progress reaches the client through mcp-go.
func (s *Server) modernTurn(ctx context.Context, name string, meta *mcp.Meta, mrt mcp.MultiRoundTripParams, token mcp.ProgressToken, run func(context.Context, sdk.Call) (json.RawMessage, error)) (raw json.RawMessage, done bool, err error) {
	if !server.IsModernRequest(ctx) {
		return nil, false, nil
	}
	var rt *roundTrip
	ex := s.newCall(ctx, token)
	if mrt.RequestState != "" {
		answers, _ := json.Marshal(mrt.InputResponses)
		if rt, err = s.resume(mrt.RequestState, name, answers, ex); err != nil {
			return nil, true, err
		}
	} else {
		var c clientCaps
		if meta != nil {
			declared, _ := meta.AdditionalFields["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
			for name, v := range declared {
				if v != nil {
					c |= capNamed(name)
				}
			}
		}
		if c == 0 {
			return nil, false, nil
		}
		rt = s.newRoundTrip(ctx, name, c, ex, run)
	}
	raw, err = rt.next(ctx)
	return raw, true, err
}
