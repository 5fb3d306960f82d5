package main

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

// era is the MCP protocol era a client speaks over streamable HTTP.
type era string

const (
	// legacy: initialize, then requests on a session (2025-11-25).
	legacy era = "legacy"
	// modern: no initialize, no session; every request carries the
	// protocol version in _meta and headers (2026-07-28).
	modern era = "modern"
)

const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
)

// endpoint is one MCP URL spoken to in one era. A legacy endpoint holds the
// session it initialized.
type endpoint struct {
	url     string
	era     era
	session string
}

// request is one prepared JSON-RPC POST.
type request struct {
	url     string
	headers map[string]string
	body    []byte
}

// newRequest prepares method with params (nil for none); name fills the
// Mcp-Name header a modern tools/call needs.
func (e *endpoint) newRequest(id int, method string, params map[string]any, name string) request {
	h := map[string]string{
		"Content-Type": "application/json",
		"Accept":       "application/json, text/event-stream",
	}
	if params == nil {
		params = map[string]any{}
	}
	switch e.era {
	case modern:
		h["MCP-Protocol-Version"] = modernVersion
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modernVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "skillbench", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	default:
		if e.session != "" {
			h["Mcp-Session-Id"] = e.session
			h["MCP-Protocol-Version"] = legacyVersion
		}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	b, _ := json.Marshal(msg)
	return request{url: e.url, headers: h, body: b}
}

// listRequest and callRequest are the two requests the benchmark repeats.
func (e *endpoint) listRequest() request { return e.newRequest(7, "tools/list", nil, "") }

func (e *endpoint) callRequest(tool string) request {
	return e.newRequest(7, "tools/call", map[string]any{"name": tool, "arguments": map[string]string{"message": "hello"}}, tool)
}

// do sends r and returns the JSON-RPC response's body (the last data line
// of an SSE response).
func (r request) do(ctx context.Context, c *http.Client) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range r.headers {
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
		return nil, nil, fmt.Errorf("POST %s: %s: %.300s", r.url, resp.Status, body)
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

// result decodes a JSON-RPC response and returns its result, or its error.
func result(body []byte) (json.RawMessage, error) {
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

// connect returns an endpoint; a legacy one is initialized first.
func connect(ctx context.Context, c *http.Client, url string, e era) (*endpoint, error) {
	ep := &endpoint{url: url, era: e}
	if e == modern {
		return ep, nil
	}
	init := ep.newRequest(1, "initialize", map[string]any{
		"protocolVersion": legacyVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": "skillbench", "version": "1"},
	}, "")
	body, h, err := init.do(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	if _, err := result(body); err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	ep.session = h.Get("Mcp-Session-Id")
	if ep.session == "" {
		return nil, fmt.Errorf("initialize %s: no Mcp-Session-Id", url)
	}
	if _, _, err := ep.newRequest(0, "notifications/initialized", nil, "").do(ctx, c); err != nil {
		return nil, fmt.Errorf("initialized %s: %w", url, err)
	}
	return ep, nil
}

// countTools lists the endpoint's tools (one page) and returns how many.
func countTools(ctx context.Context, c *http.Client, ep *endpoint) (int, int, error) {
	body, _, err := ep.listRequest().do(ctx, c)
	if err != nil {
		return 0, 0, err
	}
	res, err := result(body)
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

// checkCall calls tool once and checks the echo came back.
func checkCall(ctx context.Context, c *http.Client, ep *endpoint, tool string) error {
	body, _, err := ep.callRequest(tool).do(ctx, c)
	if err != nil {
		return err
	}
	res, err := result(body)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	if !bytes.Contains(res, []byte(`"hello"`)) || bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("tools/call %s: unexpected result %.200s", tool, res)
	}
	return nil
}

// newClient is an HTTP client keeping one connection alive per host.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 4,
			DisableCompression:  true,
		},
	}
}

// errNotReady says a gateway answered but not with the full catalog yet.
var errNotReady = errors.New("catalog not complete yet")
