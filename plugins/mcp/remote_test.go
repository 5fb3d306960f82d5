package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// swapHandler serves through the handler set last: a test restarts its
// server by setting a new one (which knows none of the old sessions).
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }
func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// hiServer is an mcp-go server with one tool, hi, that counts its calls.
func hiServer(calls *atomic.Int32) *server.MCPServer {
	s := server.NewMCPServer("hi", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("hi"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		calls.Add(1)
		return mcpgo.NewToolResultText("hi"), nil
	})
	return s
}

// forgetful answers a request with a session id it did not issue with
// 404, as the spec asks, or with 400 "No valid session ID provided", as a
// restarted TypeScript SDK server does (status 400). mcp-go's server does
// not check the session of a GET.
type forgetful struct {
	inner  http.Handler
	status int
	mu     sync.Mutex
	known  map[string]bool
}

func (f *forgetful) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	known := f.known[id]
	f.mu.Unlock()
	if id != "" && !known && f.status == http.StatusNotFound {
		http.NotFound(w, r)
		return
	}
	if id != "" && !known {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
		return
	}
	rec := &headerSpy{ResponseWriter: w}
	f.inner.ServeHTTP(rec, r)
	if sid := rec.Header().Get("Mcp-Session-Id"); sid != "" {
		f.mu.Lock()
		f.known[sid] = true
		f.mu.Unlock()
	}
}

// headerSpy is an http.ResponseWriter that also flushes.
type headerSpy struct{ http.ResponseWriter }

func (h *headerSpy) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestSessionLostResend restarts a remote server under a loaded source (a
// new server that knows none of the old sessions, on the same address and
// connections): the next call must succeed at once, sent again on a new
// session, and the tool must run once.
func TestSessionLostResend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  func(url string) map[string]any
		serve func(calls *atomic.Int32, url func() string) http.Handler
	}{
		{"404 on streamable HTTP", func(url string) map[string]any {
			return map[string]any{"url": url, "protocol_version": "2025-11-25"}
		}, func(calls *atomic.Int32, _ func() string) http.Handler {
			return server.NewStreamableHTTPServer(hiServer(calls), server.WithStateful(true))
		}},
		{"400 on streamable HTTP", func(url string) map[string]any {
			return map[string]any{"url": url, "protocol_version": "2025-11-25"}
		}, func(calls *atomic.Int32, _ func() string) http.Handler {
			return &forgetful{inner: server.NewStreamableHTTPServer(hiServer(calls)), status: http.StatusBadRequest, known: map[string]bool{}}
		}},
		{"legacy SSE", func(url string) map[string]any {
			return map[string]any{"url": url + "/sse", "transport": "sse"}
		}, func(calls *atomic.Int32, url func() string) http.Handler {
			return server.NewSSEServer(hiServer(calls), server.WithBaseURL(url()))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			sw := &swapHandler{}
			ts := httptest.NewUnstartedServer(sw)
			url := func() string { return ts.URL }
			ts.Start()
			sw.set(tc.serve(&calls, url))
			t.Cleanup(ts.Close)
			h := newHarness(t)
			h.load("r", tc.spec(ts.URL))
			h.mustCall("r", "hi", nil, nil)
			sw.set(tc.serve(&calls, url)) // the restart
			if got := text(t, h.mustCall("r", "hi", nil, nil)); got != "hi" {
				t.Fatalf("hi = %q", got)
			}
			if n := calls.Load(); n != 2 {
				t.Fatalf("the tool ran %d times; want 2", n)
			}
			if !strings.Contains(h.logs.String(), "no longer knows the session") {
				t.Fatalf("the log does not say why the source reconnected:\n%s", h.logs.String())
			}
		})
	}
}

// flushSpy is an http.ResponseWriter that calls flushed after it flushed.
type flushSpy struct {
	http.ResponseWriter
	flushed func()
}

func (f *flushSpy) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	f.flushed()
}

// TestSessionLostOnListenStream: a server that forgets the session while
// no call runs answers the standing GET stream's reconnection with 404;
// the source must start a new session then, not at the next call.
func TestSessionLostOnListenStream(t *testing.T) {
	var calls atomic.Int32
	sw := &swapHandler{}
	// gets tells when a GET stream is open: its headers are on their way.
	gets := make(chan string, 16)
	spy := func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				w = &flushSpy{ResponseWriter: w, flushed: func() {
					select {
					case gets <- r.Header.Get("Mcp-Session-Id"):
					default:
					}
				}}
			}
			inner.ServeHTTP(w, r)
		})
	}
	restart := func() {
		sw.set(spy(&forgetful{inner: server.NewStreamableHTTPServer(hiServer(&calls)), status: http.StatusNotFound, known: map[string]bool{}}))
	}
	restart()
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close)
	h := newHarness(t)
	h.load("r", map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
	select {
	case <-gets:
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream never opened")
	}
	restart()
	ts.CloseClientConnections() // the old server's stream ends with it
	h.waitChange(20*time.Second, "ready on a new session", func(ch sdk.Change) bool {
		return ch.Source == "r" && ch.Status != nil && ch.Status.State == StateReady && ch.Status.Restarts >= 1
	})
	h.mustCall("r", "hi", nil, nil)
}

// TestRedirects: a redirect to another origin is not followed (the
// server's headers would go there); one on the same origin is, headers
// and all.
func TestRedirects(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var sawKey []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawKey = append(sawKey, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(target.Close)
	mcp := server.NewStreamableHTTPServer(hiServer(&calls))
	var keys []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away", "/away/sse":
			http.Redirect(w, r, target.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/old":
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		default:
			mu.Lock()
			keys = append(keys, r.Header.Get("X-Api-Key"))
			mu.Unlock()
			mcp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(origin.Close)
	headers := map[string]string{"X-Api-Key": "k-123456789"}
	h := newHarness(t)
	for _, transport := range []string{"streamable-http", "sse"} {
		t.Run("cross-origin over "+transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			from := origin.URL + "/away?token=hush"
			_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "away", Kind: Kind, Spec: mustJSON(map[string]any{
				"url": from, "headers": headers, "transport": transport})})
			if err == nil {
				t.Fatal("loaded through a redirect to another origin")
			}
			for _, want := range []string{origin.URL + "/away?token=xxxxx", target.URL + "/mcp", "another origin", "set url to the final URL"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v\nwant it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "hush") {
				t.Errorf("err = %v shows the URL's credential", err)
			}
		})
	}
	mu.Lock()
	if len(sawKey) > 0 {
		t.Errorf("the other origin was sent requests, with X-Api-Key %q", sawKey)
	}
	mu.Unlock()
	t.Run("same origin", func(t *testing.T) {
		h.load("old", map[string]any{"url": origin.URL + "/old", "headers": headers, "protocol_version": "2025-11-25"})
		h.mustCall("old", "hi", nil, nil)
		mu.Lock()
		defer mu.Unlock()
		if len(keys) == 0 || strings.Join(keys, "") != strings.Repeat("k-123456789", len(keys)) {
			t.Fatalf("X-Api-Key on the redirected requests: %q", keys)
		}
	})
}

// TestHeaderSecrets: header values an upstream echoes back (in error
// bodies, JSON-RPC error messages, a 403 on a call) are masked in errors,
// logs and the source's status; a 403 on a call after start is recorded
// as the source's last error; the session's DELETE carries the headers.
func TestHeaderSecrets(t *testing.T) {
	const key, token = "k-topsecret-1", "tok-topsecret-2"
	var calls atomic.Int32
	mcp := server.NewStreamableHTTPServer(hiServer(&calls))
	var mu sync.Mutex
	var deleteKeys []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			mu.Lock()
			deleteKeys = append(deleteKeys, r.Header.Get("X-Api-Key")+" "+r.Header.Get("Authorization"))
			mu.Unlock()
		}
		echo := "key " + r.Header.Get("X-Api-Key") + " with " + r.Header.Get("Authorization")
		if r.URL.Path == "/broken" {
			http.Error(w, "cannot serve "+echo, http.StatusInternalServerError)
			return
		}
		if r.Method == http.MethodPost {
			id, tool := peekCall(r)
			switch tool {
			case "rpcerr":
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32001,"message":"refused `+echo+`","data":{"echo":"`+echo+`"}}}`)
				return
			case "forbidden":
				http.Error(w, "forbidden: "+echo, http.StatusForbidden)
				return
			}
		}
		mcp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	headers := map[string]string{"X-Api-Key": key, "Authorization": "Bearer " + token}
	leaks := func(what, s string) {
		t.Helper()
		if strings.Contains(s, key) || strings.Contains(s, token) {
			t.Errorf("%s shows a header value: %s", what, s)
		}
	}
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "broken", Kind: Kind, Spec: mustJSON(map[string]any{
		"url": ts.URL + "/broken", "headers": headers, "transport": "streamable-http"})})
	if err == nil || !strings.Contains(err.Error(), "cannot serve key") {
		t.Fatalf("load /broken: %v", err)
	}
	leaks("the load error", err.Error())

	h.load("r", map[string]any{"url": ts.URL, "headers": headers, "protocol_version": "2025-11-25"})
	_, err = h.call("r", "rpcerr", nil, nil)
	var re *sdk.RPCError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "refused key") {
		t.Fatalf("rpcerr: %v", err)
	}
	leaks("the JSON-RPC error", re.Message+" "+string(re.Data))

	_, err = h.call("r", "forbidden", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("forbidden: %v", err)
	}
	leaks("the 403 error", err.Error())
	if strings.Contains(err.Error(), `source "r"`) {
		t.Errorf("err = %v names the source, which the executor's caller does", err)
	}
	ch := h.waitChange(10*time.Second, "the 403 as the last error", func(ch sdk.Change) bool {
		return ch.Source == "r" && ch.Status != nil && strings.Contains(ch.Status.LastError, "403")
	})
	if ch.Status.State != StateReady {
		t.Errorf("state after a 403 = %s; want ready (other tools may work)", ch.Status.State)
	}
	leaks("the last error", ch.Status.LastError)
	h.mustCall("r", "hi", nil, nil)

	if err := h.c.Unload(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(deleteKeys) == 0 || deleteKeys[0] != key+" Bearer "+token {
		t.Errorf("DELETE headers: %q", deleteKeys)
	}
	mu.Unlock()
	leaks("the log", h.logs.String())
}

// TestHTTPResponseCap: a streamable HTTP answer over maxMessageBytes, as
// one JSON body or one SSE event, fails its request with an error that
// names the server and the limit, and the source keeps serving.
func TestHTTPResponseCap(t *testing.T) {
	old := maxMessageBytes
	maxMessageBytes = 1 << 20
	t.Cleanup(func() { maxMessageBytes = old })
	big := strings.Repeat("x", 2<<20)
	var calls atomic.Int32
	s := hiServer(&calls)
	s.AddTool(mcpgo.NewTool("big"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(big), nil
	})
	mcp := server.NewStreamableHTTPServer(s)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			id, tool := peekCall(r)
			if tool == "bigsse" {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, `event: message`+"\ndata: "+`{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"`+big+`"}]}}`+"\n\n")
				return
			}
		}
		mcp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	h := newHarness(t)
	h.load("r", map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
	for _, tool := range []string{"big", "bigsse"} {
		_, err := h.call("r", tool, nil, nil)
		if err == nil {
			t.Fatalf("%s: the oversized answer came through", tool)
		}
		for _, want := range []string{ts.URL, "1048576-byte limit"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v\nwant it to say %q", tool, err, want)
			}
		}
		h.mustCall("r", "hi", nil, nil)
	}
}

// TestRemoteStartTimeout: a remote server that never answers the
// handshake gets one clean sentence of advice.
func TestRemoteStartTimeout(t *testing.T) {
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(done) })
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "mute", Kind: Kind, Spec: mustJSON(map[string]any{
		"url": ts.URL, "transport": "streamable-http", "start_timeout": "300ms"})})
	if err == nil || !strings.Contains(err.Error(), "is the server up? If it is only slow") {
		t.Fatalf("err = %v", err)
	}
}

// TestCappedBodyEvents: the bound of an event stream is per event, however
// the reads split its lines (CRLF across two reads included), so a
// long-lived stream of small events never trips it; one big event does.
func TestCappedBodyEvents(t *testing.T) {
	small := strings.Repeat("event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n\r\n", 100)
	big := "data: " + strings.Repeat("x", 600) + "\n\n"
	for _, tc := range []struct {
		name, body string
		fails      bool
	}{
		{"many small events", small, false},
		{"a big event after small ones", small + big, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := 0
			b := &cappedBody{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(tc.body))), events: true, max: 512,
				over: func() error { over++; return errors.New("over") }}
			_, err := io.ReadAll(b)
			if (err != nil) != tc.fails || (over > 0) != tc.fails {
				t.Fatalf("err = %v after %d overflows; want failure %v", err, over, tc.fails)
			}
		})
	}
}

// peekCall reads a JSON-RPC request's id and params.name (a tool's name)
// from r's body and leaves the body to be read again.
func peekCall(r *http.Request) (id json.RawMessage, tool string) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	return m.ID, m.Params.Name
}
