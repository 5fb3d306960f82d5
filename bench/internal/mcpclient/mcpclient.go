// Package mcpclient is the benchmarks' minimal MCP client over streamable
// HTTP: it prepares JSON-RPC POSTs once (so that a load generator or a
// tight loop can repeat them) in either protocol era.
package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Era is the MCP protocol era a client speaks over streamable HTTP.
type Era string

const (
	// Legacy clients initialize, then send requests on a session.
	Legacy Era = "legacy"
	// Modern clients skip initialize and have no session: every request
	// carries the protocol version in _meta and in headers.
	Modern Era = "modern"
)

// Protocol versions of the two eras.
const (
	LegacyVersion = "2025-11-25"
	ModernVersion = "2026-07-28"
)

// ErrNotReady says a server answered but not with the full catalog yet.
var ErrNotReady = errors.New("catalog not complete yet")

// Endpoint is one MCP URL spoken to in one era. A legacy endpoint holds
// the session it initialized; it is safe for concurrent use.
type Endpoint struct {
	URL     string
	Era     Era
	Session string
}

// Request is one prepared JSON-RPC POST.
type Request struct {
	URL     string
	Headers map[string]string
	Body    []byte
}

// NewRequest prepares method with params (nil for none) and id (0 for a
// notification); name fills the Mcp-Name header a modern tools/call needs.
func (e *Endpoint) NewRequest(id int, method string, params map[string]any, name string) Request {
	h := map[string]string{
		"Content-Type": "application/json",
		"Accept":       "application/json, text/event-stream",
	}
	if params == nil {
		params = map[string]any{}
	}
	switch e.Era {
	case Modern:
		h["MCP-Protocol-Version"] = ModernVersion
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    ModernVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "skillbench", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	default:
		if e.Session != "" {
			h["Mcp-Session-Id"] = e.Session
			h["MCP-Protocol-Version"] = LegacyVersion
		}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	b, _ := json.Marshal(msg)
	return Request{URL: e.URL, Headers: h, Body: b}
}

// ListRequest is a tools/list without a cursor.
func (e *Endpoint) ListRequest() Request { return e.NewRequest(7, "tools/list", nil, "") }

// CallRequest calls tool (an echo) with {"message":"hello"}.
func (e *Endpoint) CallRequest(tool string) Request {
	return e.NewRequest(7, "tools/call", map[string]any{"name": tool, "arguments": map[string]string{"message": "hello"}}, tool)
}

// Do sends r and returns the JSON-RPC response (the last data line holding
// an id, for an SSE response) and the response headers.
func (r Request) Do(ctx context.Context, c *http.Client) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, fmt.Errorf("POST %s: %s: %.300s", r.URL, resp.Status, body)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok && bytes.Contains(d, []byte(`"id"`)) {
				last = append(last[:0], d...)
			}
		}
		body = bytes.TrimSpace(last)
	}
	return body, resp.Header, nil
}

// Result decodes a JSON-RPC response and returns its result, or its error.
func Result(body []byte) (json.RawMessage, error) {
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC response: %w: %.200s", err, body)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
	}
	if len(m.Result) == 0 {
		return nil, fmt.Errorf("response without result: %.200s", body)
	}
	return m.Result, nil
}

// Check reads a response the fast way (as a load loop must) and fails
// unless it carries a result that is not a tool error.
func Check(body []byte) error {
	if bytes.Contains(body, []byte(`"result":`)) && !bytes.Contains(body, []byte(`"isError":true`)) {
		return nil
	}
	if _, err := Result(body); err != nil {
		return err
	}
	return fmt.Errorf("unexpected response: %.200s", body)
}

// Connect returns an endpoint; a legacy one is initialized first, as a
// client that declares no capabilities.
func Connect(ctx context.Context, c *http.Client, url string, e Era) (*Endpoint, error) {
	return ConnectWith(ctx, c, url, e, map[string]any{})
}

// ConnectWith is Connect for a client declaring capabilities. A legacy
// client that declares roots, sampling or elicitation is served by
// mcp-go's session machinery in the gateway rather than its fast path.
func ConnectWith(ctx context.Context, c *http.Client, url string, e Era, capabilities map[string]any) (*Endpoint, error) {
	ep := &Endpoint{URL: url, Era: e}
	if e == Modern {
		return ep, nil
	}
	init := ep.NewRequest(1, "initialize", map[string]any{
		"protocolVersion": LegacyVersion,
		"capabilities":    capabilities,
		"clientInfo":      map[string]string{"name": "skillbench", "version": "1"},
	}, "")
	body, h, err := init.Do(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	if _, err := Result(body); err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	ep.Session = h.Get("Mcp-Session-Id")
	if ep.Session == "" {
		return nil, fmt.Errorf("initialize %s: no Mcp-Session-Id", url)
	}
	if _, _, err := ep.NewRequest(0, "notifications/initialized", nil, "").Do(ctx, c); err != nil {
		return nil, fmt.Errorf("initialized %s: %w", url, err)
	}
	return ep, nil
}

// CountTools lists the endpoint's tools (one page) and returns how many
// and the response's size in bytes.
func CountTools(ctx context.Context, c *http.Client, ep *Endpoint) (tools, size int, err error) {
	body, _, err := ep.ListRequest().Do(ctx, c)
	if err != nil {
		return 0, 0, err
	}
	res, err := Result(body)
	if err != nil {
		return 0, 0, err
	}
	var l struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(res, &l); err != nil {
		return 0, 0, err
	}
	return len(l.Tools), len(body), nil
}

// CheckCall calls tool once and checks that the echo came back.
func CheckCall(ctx context.Context, c *http.Client, ep *Endpoint, tool string) error {
	body, _, err := ep.CallRequest(tool).Do(ctx, c)
	if err != nil {
		return err
	}
	res, err := Result(body)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	if !bytes.Contains(res, []byte(`"hello"`)) || bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("tools/call %s: unexpected result %.200s", tool, res)
	}
	return nil
}

// SendProgress calls tool (the fixture's progress tool, under whatever
// name the endpoint gives it) with a progress token, and reports whether
// the session's next call is answered over SSE. mcp-go's streamable HTTP
// server switches a legacy session's answers to SSE for good on the first
// notification it sends it; skillgate writes a call's notifications on
// that call's own answer and answers the next call as plain JSON.
func SendProgress(ctx context.Context, c *http.Client, ep *Endpoint, tool string) (sse bool, err error) {
	if ep.Era != Legacy {
		return false, errors.New("only a legacy session has a stream to upgrade")
	}
	r := ep.NewRequest(8, "tools/call", map[string]any{
		"name": tool, "arguments": map[string]string{"message": "hello"},
		"_meta": map[string]any{"progressToken": "skillbench"},
	}, tool)
	body, _, err := r.Do(ctx, c)
	if err != nil {
		return false, err
	}
	if err := Check(body); err != nil {
		return false, fmt.Errorf("tools/call %s: %w", tool, err)
	}
	return AnswersSSE(ctx, c, ep.CallRequest(strings.Replace(tool, "progress", "echo", 1)))
}

// AnswersSSE sends r once and reports whether the answer came as SSE.
func AnswersSSE(ctx context.Context, c *http.Client, r Request) (bool, error) {
	body, h, err := r.Do(ctx, c)
	if err != nil {
		return false, err
	}
	if err := Check(body); err != nil {
		return false, err
	}
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream"), nil
}

// NewClient is an HTTP client that keeps connections alive.
func NewClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 32,
			DisableCompression:  true,
		},
	}
}
