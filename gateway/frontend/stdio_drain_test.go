package frontend

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

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// drainRouter serves s__slow, which answers once release is closed, and
// s__stuck, which answers only when its context ends; started gets each
// call's tool when it arrives, ended the cause a stuck call ended with.
type drainRouter struct {
	release chan struct{}
	started chan string
	ended   chan error
}

func (d drainRouter) Call(ctx context.Context, it *catalog.Item, _ string, _ json.RawMessage, _ sdk.Call) (json.RawMessage, error) {
	d.started <- it.Name
	if it.Name == "s__slow" {
		select {
		case <-d.release:
			return json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	<-ctx.Done()
	d.ended <- context.Cause(ctx)
	return nil, ctx.Err()
}

// logEvents is a slog handler that sends each record's message to a
// channel (dropped when it is full).
type logEvents chan string

func (l logEvents) Enabled(context.Context, slog.Level) bool { return true }
func (l logEvents) Handle(_ context.Context, r slog.Record) error {
	select {
	case l <- r.Message:
	default:
	}
	return nil
}
func (l logEvents) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logEvents) WithGroup(string) slog.Handler      { return l }

// waitLog waits for a log message starting with prefix.
func (l logEvents) waitLog(t *testing.T, prefix string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-l:
			if strings.HasPrefix(m, prefix) {
				return
			}
		case <-timeout:
			t.Fatalf("no log message %q within 10 s", prefix)
		}
	}
}

// TestStdioDrain: when ServeStdio's context ends while the client is
// still connected, requests that come then are refused with ErrStopping,
// a request in flight gets StdioDrain.Timeout to finish and is answered
// as usual, and one still running after it (or once StdioDrain.Now is
// closed) is cancelled at its source and answered with ErrStopping
// (-32603), once; then ServeStdio returns, stdin still open.
func TestStdioDrain(t *testing.T) {
	wantStopping := func(t *testing.T, line string) {
		t.Helper()
		var m struct {
			Error *sdk.RPCError `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Error == nil || m.Error.Code != sdk.CodeInternalError || m.Error.Message != ErrStopping.Error() {
			t.Errorf("answer: %s; want -32603 %q", line, ErrStopping)
		}
	}
	for _, tc := range []struct {
		name    string
		tool    string
		timeout time.Duration
		now     bool
	}{
		{"finished within the drain", "s__slow", time.Hour, false},
		{"cut after drain_timeout", "s__stuck", 0, false},
		{"cut by a second signal", "s__stuck", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dr := drainRouter{release: make(chan struct{}), started: make(chan string, 4), ended: make(chan error, 4)}
			logs := make(logEvents, 64)
			fe := New(dr, Options{Logger: slog.New(logs)})
			fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
				Tools: []json.RawMessage{json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"}}`), json.RawMessage(`{"name":"stuck","inputSchema":{"type":"object"}}`)},
			}}}, catalog.Options{}))
			now := make(chan struct{})
			stopCtx, stop := context.WithCancelCause(t.Context())
			defer stop(nil)
			c, done := startStdio(t, fe, WithStdioDrain(stopCtx, StdioDrain{Timeout: tc.timeout, Now: now}))
			defer c.in.Close()

			c.write(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":{}}}`)
			if got := <-dr.started; got != tc.tool {
				t.Fatalf("the source got %s", got)
			}
			stop(errors.New("SIGTERM"))
			if tc.name == "finished within the drain" {
				logs.waitLog(t, "stdio: stopping")
				c.write(t, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
				wantStopping(t, c.answer(t, "8"))
				close(dr.release)
				if line := c.answer(t, "7"); !strings.Contains(line, `"text":"done"`) {
					t.Errorf("the call in flight: %s; want its result", line)
				}
			} else {
				if tc.now {
					logs.waitLog(t, "stdio: stopping")
					close(now)
				}
				wantStopping(t, c.answer(t, "7"))
				select {
				case cause := <-dr.ended:
					t.Logf("the source's call ended: %v", cause)
				case <-time.After(10 * time.Second):
					t.Error("the cut call was not cancelled at its source within 10 s")
				}
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("ServeStdio = %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ServeStdio still serving 10 s after the drain")
			}
			for line := range c.lines {
				if strings.Contains(line, `"id":7`) {
					t.Errorf("request 7 answered twice; again: %s", line)
				}
			}
		})
	}
}

// TestStdioEOFCancels: when the client closes stdin, the requests in
// flight are cancelled at their sources at once (the client ended the
// connection; no drain) and ServeStdio returns.
func TestStdioEOFCancels(t *testing.T) {
	dr := drainRouter{release: make(chan struct{}), started: make(chan string, 4), ended: make(chan error, 4)}
	fe := New(dr, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(`{"name":"stuck","inputSchema":{"type":"object"}}`)},
	}}}, catalog.Options{}))
	c, done := startStdio(t, fe, WithStdioDrain(t.Context(), StdioDrain{Timeout: time.Hour}))
	c.write(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s__stuck","arguments":{}}}`)
	<-dr.started
	c.in.Close()
	select {
	case <-dr.ended:
	case <-time.After(10 * time.Second):
		t.Error("the call was not cancelled at its source within 10 s of stdin's end")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio still serving 10 s after stdin closed")
	}
}

// startStdio serves fe over stdio on ctx and returns an initialized
// client (2025-11-25), and a channel that gets what ServeStdio returned.
func startStdio(t *testing.T, fe *Server, ctx context.Context) (*stdioConn, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := fe.ServeStdio(ctx, inR, outW)
		outW.Close()
		done <- err
	}()
	c := &stdioConn{in: inW, lines: make(chan string, 256)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	c.write(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.answer(t, `"init"`)
	c.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c, done
}
