package frontend

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// startGateFrontEnd is a front end whose catalog is not served until the
// returned channel is closed (Options.Serving), with an extension method
// x/list.
func startGateFrontEnd() (*Server, chan struct{}) {
	serving := make(chan struct{})
	return midCallFrontEnd(Options{
		Serving: serving,
		Methods: map[string]Method{"x/list": func(context.Context, json.RawMessage, sdk.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"items":[]}`), nil
		}},
	}), serving
}

// TestStartGateStdioMethods: while the catalog is not served, a stdio
// client's initialize (serveStdio), ping and logging/setLevel are
// answered, and its tools/list, tools/call and extension method wait;
// they are answered once it is.
func TestStartGateStdioMethods(t *testing.T) {
	fe, serving := startGateFrontEnd()
	c := serveStdio(t, fe)
	c.write(t, `{"jsonrpc":"2.0","id":1,"method":"x/list"}`)
	c.write(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	c.write(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"s__log","arguments":{}}}`)
	c.write(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	c.answer(t, "4")
	c.write(t, `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"info"}}`)
	c.answer(t, "5")
	for _, line := range c.seen {
		for _, id := range []string{`"id":1,`, `"id":2,`, `"id":3,`} {
			if strings.Contains(line, id) {
				t.Errorf("answered before the catalog was served: %s", line)
			}
		}
	}
	close(serving)
	// They come in any order: an answer may be read while waiting for
	// another.
	before := len(c.seen)
	for _, id := range []string{"1", "2", "3"} {
		a := ""
		for _, line := range c.seen[before:] {
			if strings.Contains(line, `"id":`+id+`,`) {
				a = line
			}
		}
		if a == "" {
			a = c.answer(t, id)
		}
		if strings.Contains(a, `"error"`) {
			t.Errorf("request %s once the catalog is served: %s", id, a)
		}
	}
}

// TestStartGateStdioClientGone: a stdio client that closes stdin while its
// requests wait for the catalog has gone: ServeStdio returns, though the
// catalog is never served.
func TestStartGateStdioClientGone(t *testing.T) {
	fe, _ := startGateFrontEnd()
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- fe.ServeStdio(t.Context(), inR, io.Discard) }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"x/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ServeStdio still runs a minute after its client closed stdin, its requests waiting for the catalog")
	}
}
