package frontend

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// stdioConn is a client of a front end's stdio transport.
type stdioConn struct {
	in    *io.PipeWriter
	lines chan string
	seen  []string // every line read so far
}

// serveStdio serves fe over stdio until the test ends and returns an
// initialized client (2025-11-25).
func serveStdio(t *testing.T, fe *Server) *stdioConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = fe.ServeStdio(ctx, inR, outW)
		outW.Close()
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
	t.Cleanup(func() { inW.Close(); cancel(); <-done })
	c.write(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.answer(t, `"init"`)
	c.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *stdioConn) write(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// answer reads lines until the response to the request with JSON id id.
func (c *stdioConn) answer(t *testing.T, id string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("stdio ended without an answer to request %s", id)
			}
			c.seen = append(c.seen, line)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Method == "" && string(m.ID) == id {
				return line
			}
		case <-timeout:
			t.Fatalf("no answer to request %s over stdio within 10 s", id)
		}
	}
}
