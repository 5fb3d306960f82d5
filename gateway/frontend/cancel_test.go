package frontend

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// blockRouter blocks every call until its context ends, telling started
// when a call arrives and ended how it ended.
type blockRouter struct {
	started chan struct{}
	ended   chan error
}

func (b blockRouter) Call(ctx context.Context, _ *catalog.Item, _ string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestCancelledReachesTheSource: notifications/cancelled from the client
// cancels the call at the source, whichever path the call took.
func TestCancelledReachesTheSource(t *testing.T) {
	for _, caps := range []string{`{}`, `{"sampling":{}}`} {
		t.Run("capabilities "+caps, func(t *testing.T) {
			br := blockRouter{started: make(chan struct{}, 1), ended: make(chan error, 1)}
			fe := New(br, Options{})
			fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
				Tools: []json.RawMessage{json.RawMessage(`{"name":"wait","inputSchema":{"type":"object"}}`)},
			}}}, catalog.Options{}))
			ts := httptest.NewServer(fe.Handler())
			defer ts.Close()
			defer ts.CloseClientConnections() // a call left hanging must not hang Close
			post := func(session, body string) *http.Response { return send(t, http.MethodPost, ts.URL, session, body) }
			resp := post("", strings.Replace(initBody, `"capabilities":{}`, `"capabilities":`+caps, 1))
			session := resp.Header.Get("Mcp-Session-Id")
			resp.Body.Close()
			post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

			answered := make(chan string, 1)
			go func() {
				resp := post(session, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"s__wait","arguments":{}}}`)
				if resp == nil {
					answered <- ""
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answered <- string(b)
			}()
			select { // a cancel that came first would name no request
			case <-br.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the call never reached the source")
			}
			post(session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"user"}}`).Body.Close()
			select {
			case err := <-br.ended:
				if err != context.Canceled {
					t.Fatalf("the source saw %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call was not cancelled at the source")
			}
			select {
			case <-answered:
			case <-time.After(10 * time.Second):
				t.Fatal("the cancelled request never ended")
			}
		})
	}
}

// waitRouter blocks every call until its context ends, telling started
// when a call arrives and ended when it ends.
type waitRouter struct{ started, ended chan string }

func (w waitRouter) Call(ctx context.Context, it *catalog.Item, method string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	w.started <- method
	<-ctx.Done()
	w.ended <- method
	return nil, ctx.Err()
}

// responds reports whether an answer (JSON or SSE) holds a JSON-RPC
// response to the request with JSON id id.
func responds(body, id string) bool {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "" && string(m.ID) == id {
			return true
		}
	}
	return false
}

// TestCancelledGetsNoAnswer: once the client cancelled a request
// (notifications/cancelled), the gateway sends no response for it, on
// every path it answers: over HTTP (a 2025-11-25 session) its own fast
// path, mcp-go's, and extension methods — the POST still ends, as an SSE
// stream without the response — and over stdio.
func TestCancelledGetsNoAnswer(t *testing.T) {
	snap := catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools:     []json.RawMessage{json.RawMessage(`{"name":"wait","inputSchema":{"type":"object"}}`)},
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"wait"}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"demo://wait","name":"wait"}`)},
	}}}, catalog.Options{})
	requests := []struct{ path, method, params string }{
		{"tools/call", "tools/call", `{"name":"s__wait","arguments":{}}`},
		{"tools/call via mcp-go", "tools/call", `{"name":"s__wait","arguments":{}}`},
		{"prompts/get", "prompts/get", `{"name":"s__wait"}`},
		{"resources/read", "resources/read", `{"uri":"demo://wait"}`},
		{"an extension method", "x/wait", `{}`},
	}
	// Each transport gets a router of its own: a call left hanging by
	// one must not end another's wait.
	newRouter := func() (waitRouter, map[string]Method) {
		wr := waitRouter{started: make(chan string, 1), ended: make(chan string, 1)}
		return wr, map[string]Method{"x/wait": func(ctx context.Context, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
			wr.started <- "x/wait"
			<-ctx.Done()
			wr.ended <- "x/wait"
			return nil, ctx.Err()
		}}
	}
	started := func(t *testing.T, wr waitRouter, what string) {
		t.Helper()
		select {
		case <-wr.started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never reached the source", what)
		}
	}
	ended := func(t *testing.T, wr waitRouter, what string) {
		t.Helper()
		select {
		case <-wr.ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the client cancelled it, but the source's call never ended", what)
		}
	}

	t.Run("HTTP", func(t *testing.T) {
		wr, methods := newRouter()
		fe := New(wr, Options{Methods: methods})
		fe.Update(snap)
		ts := httptest.NewServer(fe.Handler())
		defer ts.Close()
		defer ts.CloseClientConnections()
		post := func(session, body string) *http.Response { return send(t, http.MethodPost, ts.URL, session, body) }
		resp := post("", initBody)
		session := resp.Header.Get("Mcp-Session-Id")
		resp.Body.Close()
		post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
		for i, req := range requests {
			id := strconv.Itoa(100 + i)
			if strings.HasSuffix(req.path, "via mcp-go") {
				fe.notified.Add(1) // a notification mcp-go may hold: the session is served by mcp-go
			}
			answered := postInBackground(ts.URL+"/mcp", session, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+req.method+`","params":`+req.params+`}`)
			started(t, wr, req.path)
			post(session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"user"}}`).Body.Close()
			ended(t, wr, req.path)
			select {
			case got := <-answered:
				if responds(got, id) {
					t.Errorf("%s: a response after the client cancelled it:\n%s", req.path, got)
				} else if !strings.HasPrefix(got, "200 OK text/event-stream") {
					t.Errorf("%s: the POST ended as %q; want an SSE stream without the response", req.path, got)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the POST of the cancelled request never ended", req.path)
			}
		}
	})

	t.Run("stdio", func(t *testing.T) {
		wr, methods := newRouter()
		fe := New(wr, Options{Methods: methods})
		fe.Update(snap)
		c := serveStdio(t, fe)
		for i, req := range requests {
			if strings.HasSuffix(req.path, "via mcp-go") {
				continue // over stdio every request is mcp-go's
			}
			id := strconv.Itoa(100 + i)
			c.write(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+req.method+`","params":`+req.params+`}`)
			started(t, wr, req.path)
			c.write(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"user"}}`)
			ended(t, wr, req.path)
			// Whatever the cancelled request would get comes before the
			// answer to a ping sent once it had time to.
			time.Sleep(200 * time.Millisecond)
			c.write(t, `{"jsonrpc":"2.0","id":"ping`+id+`","method":"ping"}`)
			c.answer(t, `"ping`+id+`"`)
			for _, line := range c.seen {
				if responds(line, id) {
					t.Errorf("%s: a response after the client cancelled it: %s", req.path, line)
				}
			}
		}
	})
}

// TestDeleteCancelsCalls: ending a 2025-11-25 session (DELETE) cancels
// the requests it still has in flight, as the client's own
// notifications/cancelled would: the source's call ends (an upstream gets
// notifications/cancelled), and no response is written for it, on the
// front end's fast path and on mcp-go's.
func TestDeleteCancelsCalls(t *testing.T) {
	for _, path := range []string{"fast path", "via mcp-go"} {
		t.Run(path, func(t *testing.T) {
			wr := waitRouter{started: make(chan string, 1), ended: make(chan string, 1)}
			fe := New(wr, Options{})
			fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
				Tools: []json.RawMessage{json.RawMessage(`{"name":"wait","inputSchema":{"type":"object"}}`)},
			}}}, catalog.Options{}))
			ts := httptest.NewServer(fe.Handler())
			defer ts.Close()
			defer ts.CloseClientConnections()
			session := initSession(t, ts.URL+"/mcp")
			if path == "via mcp-go" {
				fe.notified.Add(1) // a notification mcp-go may hold: the session is served by mcp-go
			}
			answered := postInBackground(ts.URL+"/mcp", session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s__wait","arguments":{}}}`)
			select {
			case <-wr.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the call never reached the source")
			}
			if e := do(t, http.MethodDelete, ts.URL+"/mcp", "", legacyHeaders(session)); e.status != http.StatusOK {
				t.Fatalf("DELETE: %d %q", e.status, e.body)
			}
			select {
			case <-wr.ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the session was deleted, but its call still runs at the source")
			}
			select {
			case got := <-answered:
				if responds(got, "7") {
					t.Errorf("a response on the deleted session's POST: %q", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the POST of the deleted session's call never ended")
			}
		})
	}
}

// postInBackground POSTs body to url in the 2025-11-25 session and sends
// on the channel it returns the answer's status, content type and body
// ("200 OK text/event-stream\n..."), or the error. Not send's helpers: the
// request may outlive the test.
func postInBackground(url, session, body string) <-chan string {
	answered := make(chan string, 1)
	go func() {
		hr, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range legacyHeaders(session) {
			hr.Header.Set(k, v)
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- resp.Status + " " + resp.Header.Get("Content-Type") + "\n" + string(b)
	}()
	return answered
}
