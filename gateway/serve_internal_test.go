package gateway

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/frontend"
)

// TestIdleConnectionClosed: a keep-alive connection that waits for its
// next request is closed after idleTimeout, while a session's GET stream
// opened before it, a response still being written, goes on.
func TestIdleConnectionClosed(t *testing.T) {
	old := idleTimeout
	idleTimeout = 300 * time.Millisecond
	t.Cleanup(func() { idleTimeout = old })

	g, err := New(Options{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		g.StopNow()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()

	// A session with its GET stream open.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp := postJSON(t, base+"/mcp", "", init)
	sess := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if sess == "" {
		t.Fatalf("initialize: no Mcp-Session-Id (status %d)", resp.StatusCode)
	}
	resp = postJSON(t, base+"/mcp", sess, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sess)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: status %d", stream.StatusCode)
	}
	streamEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, stream.Body)
		streamEnded <- err
	}()

	// A raw connection that sends one request and then nothing.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	hr, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, hr.Body)
	hr.Body.Close()
	if hr.Close {
		t.Fatal("/healthz asked to close the connection; the test needs it kept alive")
	}
	// The bound is for a broken gateway only: the server closes the
	// connection after idleTimeout.
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("an idle keep-alive connection was not closed by the gateway (read: %v); want EOF after IdleTimeout", err)
	}

	// The stream was open longer than idleTimeout and still is.
	select {
	case err := <-streamEnded:
		t.Fatalf("the session's GET stream ended with the idle connection: %v", err)
	default:
	}
}

// postJSON sends body as a JSON-RPC POST to url, in session sess if not "".
func postJSON(t *testing.T, url, sess, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sess != "" {
		req.Header.Set("Mcp-Session-Id", sess)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestOneStoppingError: the HTTP and the stdio front ends answer a request
// a stop cut with the same error, which callers may test with errors.Is.
func TestOneStoppingError(t *testing.T) {
	if !errors.Is(errStopping, frontend.ErrStopping) {
		t.Errorf("errStopping (%v) is not frontend.ErrStopping: two errors with one meaning", errStopping)
	}
}
