package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// The 2026-07-28 revision ("modern") has no initialize handshake and no
// sessions: every request carries the protocol version and the client's
// identity and capabilities in _meta, and over HTTP names its method (and
// tool) in headers. Server-to-client requests are replaced by results asking
// for input (multi round-trip), and notifications outside calls come on a
// subscriptions/listen stream. This file does all of that on raw JSON, so
// that nothing an upstream sends is re-encoded through mcp-go's types.

const (
	// discoverTimeout bounds server/discover: a server predating it may
	// never answer.
	discoverTimeout = 5 * time.Second
	// maxInputRounds bounds multi round-trip exchanges, like mcp-go's client.
	maxInputRounds = 10
	// maxShedRounds bounds retries a server asks for without asking input.
	maxShedRounds = 3
)

// setVersion records the modern protocol version and the _meta it implies.
func (c *conn) setVersion(v string) {
	c.version = v
	c.meta = []field{
		{mcpgo.MetaKeyProtocolVersion, mustJSON(v)},
		{mcpgo.MetaKeyClientCapabilities, clientCapabilities},
		{mcpgo.MetaKeyClientInfo, clientInfo},
	}
	c.w.setProtocolVersion(v)
}

// discover negotiates the modern protocol. Any failure means the upstream
// is not (or not only) a modern server; the caller may fall back.
func (c *conn) discover(ctx context.Context, version string) error {
	c.modern = true
	c.setVersion(version)
	for attempt := 0; ; attempt++ {
		params, _ := c.withProtocolMeta(json.RawMessage(`{}`))
		pctx, cancel := context.WithTimeout(ctx, discoverTimeout)
		res, err := c.request(pctx, "server/discover", params)
		cancel()
		if err != nil {
			var re *sdk.RPCError
			if attempt == 0 && errors.As(err, &re) && re.Code == mcpgo.UNSUPPORTED_PROTOCOL_VERSION {
				var d struct {
					Supported []string `json:"supported"`
				}
				_ = json.Unmarshal(re.Data, &d)
				if v := mutualModern(d.Supported); v != "" && v != c.version {
					c.setVersion(v)
					continue
				}
			}
			return fmt.Errorf("server/discover: %w", err)
		}
		var r struct {
			SupportedVersions []string                   `json:"supportedVersions"`
			Capabilities      json.RawMessage            `json:"capabilities"`
			Instructions      json.RawMessage            `json:"instructions"`
			Meta              map[string]json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(res, &r); err != nil || len(r.SupportedVersions) == 0 || len(r.Capabilities) == 0 {
			return fmt.Errorf("server/discover: %w (a server that answers unknown methods with an empty result?): %s",
				errMisanswer, truncate(string(res), 200))
		}
		if !slices.Contains(r.SupportedVersions, c.version) {
			v := mutualModern(r.SupportedVersions)
			if v == "" {
				return fmt.Errorf("server/discover: %w: the upstream supports %v, none of them 2026-07-28 or later", errMisanswer, r.SupportedVersions)
			}
			c.setVersion(v)
		}
		if err := json.Unmarshal(r.Capabilities, &c.caps); err != nil {
			return fmt.Errorf("server/discover: the upstream's capabilities do not decode: %w", err)
		}
		// Definitions.Server has the shape of an initialize result in
		// both eras; the raw parts are kept as they came.
		server := map[string]json.RawMessage{"protocolVersion": mustJSON(c.version), "capabilities": r.Capabilities}
		if si := r.Meta[mcpgo.MetaKeyServerInfo]; len(si) > 0 {
			server["serverInfo"] = si
		}
		if len(r.Instructions) > 0 {
			server["instructions"] = r.Instructions
		}
		c.server = mustJSON(server)
		return nil
	}
}

// mutualModern is the newest modern version both sides support.
func mutualModern(supported []string) string {
	for _, v := range mcpgo.ValidProtocolVersions {
		if mcpgo.IsModernProtocol(v) && slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

// withProtocolMeta adds the modern per-request _meta to params.
func (c *conn) withProtocolMeta(params json.RawMessage) (json.RawMessage, error) {
	if !c.modern {
		return params, nil
	}
	return withMeta(params, c.meta...)
}

// standardHeaders are the Mcp-Method, Mcp-Name and Mcp-Param-* headers of a
// modern HTTP request.
func (c *conn) standardHeaders(method string, params json.RawMessage) http.Header {
	std := mcpgo.StandardHeaders(c.version, mcpgo.MCPMethod(method), params)
	if len(std) == 0 {
		return nil
	}
	h := make(http.Header, len(std))
	for k, v := range std {
		h.Set(k, v)
	}
	if method == string(mcpgo.MethodToolsCall) {
		c.mu.Lock()
		tools := c.headerT
		c.mu.Unlock()
		if len(tools) > 0 {
			var p struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(params, &p) == nil && tools[p.Name] != nil {
				for k, v := range mcpgo.GenerateParamHeaders(tools[p.Name], params) {
					h.Set(k, v)
				}
			}
		}
	}
	return h
}

// checkTools drops, on modern HTTP connections, tools whose x-mcp-header
// annotations are invalid (the revision requires clients to), and remembers
// the valid ones to mirror their parameters into headers.
func (c *conn) checkTools(items []json.RawMessage) []json.RawMessage {
	if !c.modern {
		return items
	}
	if _, ok := c.w.(*httpWire); !ok {
		return items
	}
	tools := map[string]*mcpgo.Tool{}
	out := items[:0:0]
	for _, raw := range items {
		if !bytes.Contains(raw, []byte("x-mcp-header")) {
			out = append(out, raw)
			continue
		}
		var t mcpgo.Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			out = append(out, raw)
			continue
		}
		if err := mcpgo.ValidateParamHeaderAnnotations(&t); err != nil {
			c.log.Warn("leaving out a tool with invalid x-mcp-header annotations", "tool", t.Name, "err", err)
			continue
		}
		tools[t.Name] = &t
		out = append(out, raw)
	}
	c.mu.Lock()
	c.headerT = tools
	c.mu.Unlock()
	return out
}

// roundTrips completes a multi round-trip request: while the result asks
// for input, each input request goes to the call's client and the request
// is sent again with the answers.
func (c *conn) roundTrips(ctx context.Context, ic *inflight, method string, params, res json.RawMessage) (json.RawMessage, error) {
	shed := 0
	for round := 1; ; round++ {
		if !bytes.Contains(res, []byte(`"input_required"`)) {
			return res, nil
		}
		var r struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  json.RawMessage            `json:"requestState"`
		}
		if json.Unmarshal(res, &r) != nil || r.ResultType != string(mcpgo.ResultTypeInputRequired) {
			return res, nil
		}
		if len(r.InputRequests) == 0 {
			if shed++; shed >= maxShedRounds {
				return nil, fmt.Errorf("%w: source %q: the upstream asked %d times to retry later", sdk.ErrUnavailable, c.src.name, shed)
			}
		} else {
			shed = 0
		}
		if round > maxInputRounds {
			return nil, fmt.Errorf("source %q: %s: the upstream asked for input more than %d times", c.src.name, method, maxInputRounds)
		}
		answers := make(map[string]json.RawMessage, len(r.InputRequests))
		for id, raw := range r.InputRequests {
			var ir struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(raw, &ir); err != nil || ir.Method == "" {
				return nil, fmt.Errorf("source %q: %s: input request %q is malformed", c.src.name, method, id)
			}
			if ic.call == nil {
				return nil, fmt.Errorf("source %q: %s needs %s from a client, and there is none", c.src.name, method, ir.Method)
			}
			out, err := ic.call.Request(ctx, ir.Method, ir.Params)
			if err != nil {
				return nil, err
			}
			answers[id] = out
		}
		fields := []field{{"inputResponses", mustJSON(answers)}}
		if len(r.RequestState) > 0 && string(r.RequestState) != "null" {
			fields = append(fields, field{"requestState", r.RequestState})
		}
		p, err := withFields(params, fields...)
		if err != nil {
			return nil, err
		}
		if res, err = c.request(ctx, method, p); err != nil {
			return nil, err
		}
	}
}

// listenState is the subscriptions/listen stream of a modern conn.
type listenState struct {
	mu     sync.Mutex
	cancel context.CancelFunc
}

// listenFilter is what to listen for: every list_changed the upstream
// offers, and updates of the resources clients subscribed to.
func (c *conn) listenFilter() (json.RawMessage, bool) {
	f := map[string]any{}
	if c.caps.Tools != nil && c.caps.Tools.ListChanged {
		f["toolsListChanged"] = true
	}
	if c.caps.Prompts != nil && c.caps.Prompts.ListChanged {
		f["promptsListChanged"] = true
	}
	if c.caps.Resources != nil && c.caps.Resources.ListChanged {
		f["resourcesListChanged"] = true
	}
	if c.caps.Resources != nil && c.caps.Resources.Subscribe {
		if uris := c.src.subscriptions(); len(uris) > 0 {
			f["resourceSubscriptions"] = uris
		}
	}
	return mustJSON(f), len(f) > 0
}

// Reopening the subscriptions/listen stream: the first reopening waits
// listenMinBackoff and each one after a stream that ended again doubles
// the wait, up to maxBackoff. A stream that stayed open healthyAfter or
// longer was healthy, whatever ended it (a proxy's idle timeout, a server
// restart): the wait after it starts again from listenMinBackoff.
const listenMinBackoff = time.Second

// startListen (re)opens the subscriptions/listen stream with the current
// filter. The stream is reopened with backoff when it ends.
func (c *conn) startListen() {
	c.listen.mu.Lock()
	defer c.listen.mu.Unlock()
	if c.listen.cancel != nil {
		c.listen.cancel()
		c.listen.cancel = nil
	}
	filter, ok := c.listenFilter()
	if !ok || c.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.listen.cancel = cancel
	clk := c.src.e.clock
	c.spawn(func() {
		backoff := listenMinBackoff
		for {
			params, _ := c.withProtocolMeta(mustJSON(map[string]json.RawMessage{"notifications": filter}))
			opened := clk.Now()
			_, err := c.request(context.WithValue(ctx, listenKey{}, true), "subscriptions/listen", params)
			if ctx.Err() != nil || c.w.cause() != nil {
				return
			}
			if errors.Is(err, sdk.ErrUnavailable) {
				// The wire ends once the calls in flight have their
				// answers (httpWire.dieWhenIdle); the source reconnects.
				c.log.Warn("subscriptions/listen could not reconnect; the connection ends when the calls in flight end", "err", err)
				return
			}
			var re *sdk.RPCError
			if errors.As(err, &re) && re.Code == sdk.CodeMethodNotFound {
				c.log.Info("upstream does not offer subscriptions/listen; list changes will not be seen")
				return
			}
			if clk.Now().Sub(opened) >= healthyAfter {
				backoff = listenMinBackoff
			}
			if err != nil {
				c.log.Warn("subscriptions/listen ended", "err", err, "retry_in", backoff)
			}
			if !clk.Wait(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, maxBackoff)
		}
	})
}

// modernSubscribe handles resources/subscribe and resources/unsubscribe,
// which 2026-07-28 folded into the subscriptions/listen filter.
func (c *conn) modernSubscribe(method string, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == "" {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: method + " needs a uri"}
	}
	if c.caps.Resources == nil || !c.caps.Resources.Subscribe {
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: fmt.Sprintf("source %q does not offer resource subscriptions", c.src.name)}
	}
	c.src.subscribe(p.URI, method == "resources/subscribe")
	c.startListen()
	return json.RawMessage(`{}`), nil
}

// clock is the time the listen stream's reconnection reads and waits on.
// Tests give the executor a fake one (withClock), so that its backoff is
// seen without waiting for it.
type clock interface {
	Now() time.Time
	// Wait sleeps for d unless ctx ends first; it reports whether it slept.
	Wait(ctx context.Context, d time.Duration) bool
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time                                 { return time.Now() }
func (realClock) Wait(ctx context.Context, d time.Duration) bool { return waitCtx(ctx, d) }

// waitCtx sleeps for d unless ctx ends first; it reports whether it slept.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
