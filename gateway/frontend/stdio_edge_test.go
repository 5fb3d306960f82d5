package frontend

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// midCallRouter is a source whose tools do what an executor plugin or an
// upstream does mid-call: "log" sends an info and an error log message,
// "sample" and "roots" ask the call's client (sampling/createMessage,
// roots/list) and answer with what came back.
type midCallRouter struct{}

func (midCallRouter) Call(ctx context.Context, _ *catalog.Item, _ string, params json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	text := ""
	switch p.Name {
	case "log":
		for _, level := range []string{"info", "error"} {
			if err := call.Notify(sdk.Notification{Method: "notifications/message", Params: json.RawMessage(`{"level":"` + level + `","data":"` + level + ` mid-call"}`)}); err != nil {
				return nil, err
			}
		}
		text = "logged"
	case "sample", "roots":
		method, req := "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`
		if p.Name == "roots" {
			method, req = "roots/list", `{}`
		}
		res, err := call.Request(ctx, method, json.RawMessage(req))
		if err != nil {
			text = "refused: " + err.Error()
		} else {
			text = "answered: " + string(res)
		}
	}
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	return b, nil
}

// midCallFrontEnd is a front end serving midCallRouter's tools as s__log,
// s__sample and s__roots.
func midCallFrontEnd(opts Options) *Server {
	fe := New(midCallRouter{}, opts)
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{
			json.RawMessage(`{"name":"log","inputSchema":{"type":"object"}}`),
			json.RawMessage(`{"name":"sample","inputSchema":{"type":"object"}}`),
			json.RawMessage(`{"name":"roots","inputSchema":{"type":"object"}}`),
		},
	}}}, catalog.Options{}))
	return fe
}

// modernMetaOf is the _meta of a 2026-07-28 request, with extra members.
func modernMetaOf(extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
}

// logLines returns the data of the log messages among lines.
func logLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		var n struct {
			Method string `json:"method"`
			Params struct {
				Data string `json:"data"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &n) == nil && n.Method == "notifications/message" {
			out = append(out, n.Params.Data)
		}
	}
	return out
}

// TestStdioLineEdges: blank lines between messages are ignored, a batch
// is refused as the HTTP front end refuses one, and a line past the body
// cap is refused with an error while the next line is served.
func TestStdioLineEdges(t *testing.T) {
	fe := midCallFrontEnd(Options{HTTP: HTTPOptions{BodyCap: 1024}})
	c := serveStdio(t, fe)
	c.write(t, "")
	c.write(t, "   \t\r")
	c.write(t, `[{"jsonrpc":"2.0","id":"b1","method":"ping"}]`)
	c.write(t, `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`+strings.Repeat("x", 4096)+`"}}`)
	c.write(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	c.answer(t, `"after"`)
	var batch, long bool
	for _, line := range c.seen {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("a line on stdout is not JSON: %q", line)
			continue
		}
		switch {
		case m.Error == nil:
		case m.Error.Code == -32700:
			t.Errorf("a blank line was answered as a parse error: %s", line)
		case m.Error.Code == -32600 && strings.Contains(m.Error.Message, "batches are not supported"):
			batch = true
		case m.Error.Code == -32600 && strings.Contains(m.Error.Message, "1024 bytes"):
			long = true
		default:
			t.Errorf("unexpected error answer: %s", line)
		}
	}
	if !batch {
		t.Errorf("no -32600 \"batches are not supported\" answer to a batch; stdout:\n%s", strings.Join(c.seen, "\n"))
	}
	if !long {
		t.Errorf("no -32600 answer naming the 1024-byte cap to a longer line; stdout:\n%s", strings.Join(c.seen, "\n"))
	}
}

// TestStdioUndeclaredCapabilities: a stdio client that declared no
// sampling and no roots is not sent those requests (it would not answer,
// and the call would hang until its timeout): sampling is refused at
// once and roots/list answered with no roots, as over HTTP. A client that
// declared them is asked.
func TestStdioUndeclaredCapabilities(t *testing.T) {
	c := serveStdio(t, midCallFrontEnd(Options{})) // capabilities: {}
	c.write(t, `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"s__sample","arguments":{}}}`)
	if got := c.answer(t, `"s"`); !strings.Contains(got, "did not declare the sampling capability") {
		t.Errorf("sampling for a client without the capability: %s", got)
	}
	c.write(t, `{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"s__roots","arguments":{}}}`)
	if got := c.answer(t, `"r"`); !strings.Contains(got, `answered: {\"roots\":[]}`) {
		t.Errorf("roots/list for a client without the capability: %s", got)
	}
	for _, line := range c.seen {
		if strings.Contains(line, `"method":"sampling/createMessage"`) || strings.Contains(line, `"method":"roots/list"`) {
			t.Errorf("the client was sent a request it declared no capability for: %s", line)
		}
	}
	// The same over stdio in 2026-07-28, which declares per request.
	c.write(t, `{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"s__sample","arguments":{},`+modernMetaOf("")+`}}`)
	if got := c.answer(t, `"m"`); !strings.Contains(got, "did not declare the sampling capability") {
		t.Errorf("sampling for a 2026-07-28 request without the capability: %s", got)
	}
}

// TestStdioDeclaredSampling: a stdio client that declared sampling gets
// the request and its answer reaches the source.
func TestStdioDeclaredSampling(t *testing.T) {
	fe := midCallFrontEnd(Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = fe.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); cancel(); <-done })
	c := &stdioConn{in: inW, lines: make(chan string, 256)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, `"method":"sampling/createMessage"`) {
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.Unmarshal([]byte(line), &req)
				_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}}`+"\n")
			}
			c.lines <- line
		}
	}()
	c.write(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	c.answer(t, `"init"`)
	c.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.write(t, `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"s__sample","arguments":{}}}`)
	if got := c.answer(t, `"s"`); !strings.Contains(got, "sampled") {
		t.Errorf("sampling for a client that declared it: %s", got)
	}
}

// TestInCallLogLevel: a source's log messages during a call reach the
// client at the level it asked for: a legacy session's (stdio or HTTP)
// logging/setLevel, a 2026-07-28 request's _meta logLevel, and none for a
// 2026-07-28 request that asked for none. A session that never set a
// level gets them all.
func TestInCallLogLevel(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		c := serveStdio(t, midCallFrontEnd(Options{}))
		call := func(id, meta string) []string {
			c.seen = nil
			c.write(t, `{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":{"name":"s__log","arguments":{}`+meta+`}}`)
			c.answer(t, `"`+id+`"`)
			return logLines(c.seen)
		}
		if got := call("unset", ""); len(got) != 2 {
			t.Errorf("before any logging/setLevel: log messages %q; want both", got)
		}
		c.write(t, `{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"error"}}`)
		c.answer(t, `"lvl"`)
		if got := call("legacy", ""); len(got) != 1 || got[0] != "error mid-call" {
			t.Errorf("after logging/setLevel error: log messages %q; want only the error", got)
		}
		if got := call("modern-none", ","+modernMetaOf("")); len(got) != 0 {
			t.Errorf("2026-07-28 request without logLevel: log messages %q; want none", got)
		}
		if got := call("modern-info", ","+modernMetaOf(`,"io.modelcontextprotocol/logLevel":"info"`)); len(got) != 2 {
			t.Errorf("2026-07-28 request with logLevel info: log messages %q; want both", got)
		}
	})
	t.Run("http", func(t *testing.T) {
		ts := httptest.NewServer(midCallFrontEnd(Options{}).Handler())
		defer ts.Close()
		resp := send(t, http.MethodPost, ts.URL, "", initBody)
		session := resp.Header.Get("Mcp-Session-Id")
		resp.Body.Close()
		send(t, http.MethodPost, ts.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
		send(t, http.MethodPost, ts.URL, session, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}`).Body.Close()
		read := func(resp *http.Response) []string {
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var lines []string
			for _, l := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(l, "data: "); ok {
					lines = append(lines, d)
				} else if strings.HasPrefix(l, "{") {
					lines = append(lines, l)
				}
			}
			return lines
		}
		got := logLines(read(send(t, http.MethodPost, ts.URL, session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"s__log","arguments":{}}}`)))
		if len(got) != 1 || got[0] != "error mid-call" {
			t.Errorf("legacy session at level error: log messages %q; want only the error", got)
		}
		modern := func(extra string) []string {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"s__log","arguments":{},`+modernMetaOf(extra)+`}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "s__log")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return logLines(read(resp))
		}
		if got := modern(""); len(got) != 0 {
			t.Errorf("2026-07-28 request without logLevel: log messages %q; want none", got)
		}
		if got := modern(`,"io.modelcontextprotocol/logLevel":"warning"`); len(got) != 1 || got[0] != "error mid-call" {
			t.Errorf("2026-07-28 request with logLevel warning: log messages %q; want only the error", got)
		}
	})
}

// brokenWriter fails every write, as stdout does once the client closed
// its end of the pipe.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("write |1: broken pipe") }

// TestStdioBrokenStdout: when writing to the client fails, ServeStdio
// ends (as on stdin EOF) with ErrStdoutClosed, though stdin stays open.
func TestStdioBrokenStdout(t *testing.T) {
	fe := midCallFrontEnd(Options{})
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- fe.ServeStdio(t.Context(), inR, brokenWriter{}) }()
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	select {
	case err := <-done:
		if !errors.Is(err, ErrStdoutClosed) {
			t.Errorf("ServeStdio = %v; want ErrStdoutClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio still serving 10 s after its stdout broke")
	}
}
