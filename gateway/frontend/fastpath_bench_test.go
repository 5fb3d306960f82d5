package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// BenchmarkFastPath is what the front end adds to a tools/list or
// tools/call it answers itself (the HTTP fast paths), in each era: the
// handler is driven in process, with a router that answers at once.
func BenchmarkFastPath(b *testing.B) {
	fe := New(fastRouter{}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "up", Namespace: "up", Executor: "x", Defs: sdk.Definitions{Tools: benchTools(b)}}}, catalog.Options{}))
	h := fe.Handler()

	init := httptest.NewRecorder()
	h.ServeHTTP(init, benchRequest(initBody, "2025-11-25", "", ""))
	session := init.Header().Get("Mcp-Session-Id")
	if session == "" {
		b.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		name, body, version, session, method string
	}{
		{"legacy/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-11-25", session, ""},
		{"legacy/call", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"up__tool_007","arguments":{"path":"/tmp/x"}}}`, "2025-11-25", session, ""},
		{"modern/list", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`, "2026-07-28", "", "tools/list"},
		{"modern/call", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"up__tool_007","arguments":{"path":"/tmp/x"},` + modernMeta + `}}`, "2026-07-28", "", "tools/call"},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				h.ServeHTTP(w, benchRequest(c.body, c.version, c.session, c.method))
				if w.code != http.StatusOK || !bytes.Contains(w.body.Bytes(), []byte(`"result"`)) {
					b.Fatalf("%d %s", w.code, w.body.Bytes())
				}
			}
		})
	}
}

// fastRouter answers every call at once with a small fixed result.
type fastRouter struct{}

func (fastRouter) Call(_ context.Context, _ *catalog.Item, _ string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
}

func benchRequest(body, version, session, method string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(body)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", version)
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
	}
	if method != "" {
		r.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			r.Header.Set("Mcp-Name", "up__tool_007")
		}
	}
	return r
}

// benchWriter is a reusable ResponseWriter that keeps what a check needs.
type benchWriter struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (w *benchWriter) Header() http.Header { return w.h }
func (w *benchWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *benchWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.body.Write(p)
}
func (w *benchWriter) Flush() {}
func (w *benchWriter) reset() {
	clear(w.h)
	w.code = 0
	w.body.Reset()
}

// BenchmarkParseRequest is the one read of every POST body.
func BenchmarkParseRequest(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"up__tool_007","arguments":{"path":"/tmp/x","start_line":3},"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseRequest(body); !ok {
			b.Fatal("not parsed")
		}
	}
}
