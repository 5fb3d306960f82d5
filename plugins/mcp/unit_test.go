package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestParseSpec(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, spec string
		want       string // substring of the error; empty for success
	}{
		{"stdio", `{"command":"node","args":["a.js"],"env":{"K":"v"},"cwd":"` + dir + `"}`, ""},
		{"gateway nulls", `{"command":"node","args":null,"env":null,"cwd":"","url":"","headers":null,"transport":"","protocol_version":"","start":""}`, ""},
		{"http", `{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer x"},"timeout":"30s","protocol_version":"2025-06-18"}`, ""},
		{"sse", `{"url":"http://127.0.0.1:1/sse","transport":"sse","start":"lazy"}`, ""},
		{"empty", ``, "empty spec"},
		{"not an object", `[1]`, "not a JSON object"},
		{"neither", `{}`, "set command (a stdio server) or url"},
		{"both", `{"command":"x","url":"http://a/"}`, "not both"},
		{"unknown key", `{"command":"x","comand":"y"}`, `unknown key "comand"`},
		{"wrong type", `{"command":"x","args":"a b"}`, "args: json: cannot unmarshal string"},
		{"bad duration", `{"command":"x","timeout":"soon"}`, `timeout: want a duration string`},
		{"negative", `{"command":"x","shutdown_grace":"-1s"}`, "shutdown_grace must not be negative"},
		{"transport", `{"command":"x","transport":"websocket"}`, `transport "websocket" is not one of`},
		{"stdio with url transport", `{"command":"x","transport":"sse"}`, "needs url"},
		{"http with stdio transport", `{"url":"http://a/","transport":"stdio"}`, "needs command"},
		{"headers on stdio", `{"command":"x","headers":{"a":"b"}}`, "headers apply to url servers only"},
		{"env on http", `{"url":"http://a/","env":{"a":"b"}}`, "apply to command servers only"},
		{"relative url", `{"url":"/mcp"}`, "absolute http"},
		{"ftp url", `{"url":"ftp://a/mcp"}`, "absolute http"},
		{"version", `{"command":"x","protocol_version":"2099-01-01"}`, `protocol_version "2099-01-01" is not one of`},
		{"start", `{"command":"x","start":"later"}`, `start "later" is not eager or lazy`},
		{"cwd", `{"command":"x","cwd":"/no/such/dir"}`, "cwd:"},
		{"env name", `{"command":"x","env":{"A=B":"c"}}`, `env name "A=B" is not valid`},
		{"all at once", `{"command":"x","url":"http://a/","start":"later","x":1}`, `unknown key "x"; set command or url, not both; start "later"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec(json.RawMessage(tc.spec))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s.Start == "" || s.ShutdownGrace == 0 {
					t.Fatalf("defaults not filled: %+v", s)
				}
				return
			}
			if !errors.Is(err, sdk.ErrInvalidSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
		})
	}
	s, err := ParseSpec(json.RawMessage(`{"command":"x"}`))
	if err != nil || s.Start != StartEager || time.Duration(s.ShutdownGrace) != DefaultShutdownGrace || s.transport() != TransportStdio {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	s, _ = ParseSpec(json.RawMessage(`{"url":"http://a/"}`))
	if s.transport() != TransportStreamableHTTP {
		t.Fatalf("auto transport for url = %s", s.transport())
	}
}

func TestWithMeta(t *testing.T) {
	tok := field{"progressToken", json.RawMessage(`"sg-1"`)}
	for _, tc := range []struct{ in, want string }{
		{``, `{"_meta":{"progressToken":"sg-1"}}`},
		{`null`, `{"_meta":{"progressToken":"sg-1"}}`},
		{`{}`, `{"_meta":{"progressToken":"sg-1"}}`},
		{` { } `, `{"_meta":{"progressToken":"sg-1"}}`},
		// Without a _meta, the params keep their bytes (and order).
		{`{"name":"t","arguments":{"n":1.50,"big":12345678901234567890}}`, `{"_meta":{"progressToken":"sg-1"},"name":"t","arguments":{"n":1.50,"big":12345678901234567890}}`},
		// With one, _meta is merged and the values keep their bytes.
		{`{"name":"t","_meta":{"k":1.0,"progressToken":5}}`, `{"_meta":{"k":1.0,"progressToken":"sg-1"},"name":"t"}`},
		{`{"name":"_meta"}`, `{"_meta":{"progressToken":"sg-1"},"name":"_meta"}`},
	} {
		got, err := withMeta(json.RawMessage(tc.in), tok)
		if err != nil || string(got) != tc.want {
			t.Errorf("withMeta(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := withMeta(json.RawMessage(`[1]`), tok); !errors.Is(err, errNotObject) {
		t.Errorf("array params: %v", err)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300)
	in := `{"a":1}` + "\n" + `{"jsonrpc":"2.0","id":42,"result":"` + long + "\"}\n" + "tail-without-newline"
	lr := &lineReader{r: bufio.NewReaderSize(strings.NewReader(in), 16), max: 100}
	line, _, skipped, err := lr.next()
	if err != nil || skipped || string(line) != "{\"a\":1}\n" {
		t.Fatalf("first = %q %v %v", line, skipped, err)
	}
	line, size, skipped, err := lr.next()
	if err != nil || !skipped || size != len(`{"jsonrpc":"2.0","id":42,"result":"`)+len(long)+3 || !strings.HasPrefix(string(line), `{"jsonrpc":"2.0","id":42`) {
		t.Fatalf("second = %q %d %v %v", line, size, skipped, err)
	}
	if id, ok := sniffResponseID(line); !ok || id != 42 {
		t.Fatalf("sniffed %d %v", id, ok)
	}
	line, _, _, err = lr.next()
	if err != nil || string(line) != "tail-without-newline" {
		t.Fatalf("third = %q %v", line, err)
	}
	if _, _, _, err = lr.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end = %v", err)
	}
	for _, p := range []string{`{"jsonrpc":"2.0","method":"x","id":3`, `{"id" : "s1"`, `{"result":1`} {
		if _, ok := sniffResponseID([]byte(p)); ok {
			t.Errorf("sniffed an id from %s", p)
		}
	}
}

// FuzzParseSpec checks that no spec makes the parser panic, and that an
// accepted spec is valid.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{`{"command":"x"}`, `{"url":"http://a/","timeout":"1s"}`, `{"command":"x","env":{"A":"b"},"start":"lazy"}`, `[]`, `{"timeout":5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ParseSpec(raw)
		if err != nil {
			if !errors.Is(err, sdk.ErrInvalidSpec) {
				t.Fatalf("error does not wrap ErrInvalidSpec: %v", err)
			}
			return
		}
		if (s.Command == "") == (s.URL == "") || s.Start == "" {
			t.Fatalf("accepted an invalid spec: %+v", s)
		}
	})
}

// FuzzStdioFraming feeds arbitrary upstream output to the stdio wire's reader
// and dispatcher: nothing may panic, and a pending request is either
// answered or left pending.
func FuzzStdioFraming(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x","data":[1]}}`,
		`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sg-1","progress":1}}`,
		"garbage\n{}\n[]\nnull\n",
		`{"jsonrpc":"2.0","id":1,"error":"nope"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		w := &stdioWire{
			log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
			calls:   calls{waiting: map[int64]chan *rpcResponse{1: make(chan *rpcResponse, 1)}},
			garbage: limiter{per: 5},
			h: wireHandlers{
				notification: func(context.Context, string, json.RawMessage) {},
			},
		}
		lr := &lineReader{r: bufio.NewReaderSize(strings.NewReader(string(out)), 16), max: 64}
		for {
			line, size, skipped, err := lr.next()
			if err != nil {
				break
			}
			if skipped {
				if id, ok := sniffResponseID(line); ok {
					w.calls.deliver(id, &rpcResponse{})
				}
				_ = size
				continue
			}
			// Server requests are not served here: they need a live wire.
			var m envelope
			if json.Unmarshal(line, &m) == nil && m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
				continue
			}
			w.dispatch(line)
		}
	})
}
