package gateway_test

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestStalledBodyClosed: a request whose body stops arriving does not
// hold its connection: on the MCP endpoint it gets 408, and on a path that
// never reads the body (/healthz) the connection closes once the server
// gave up reading the rest, both within the front end's body limits (10s
// of silence).
func TestStalledBodyClosed(t *testing.T) {
	r := startGateway(t, "plugins: {dirs: ["+t.TempDir()+"]}\n", nil)
	u, err := url.Parse(r.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/mcp", "/healthz"} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{", path, u.Host)
		br := bufio.NewReader(conn)
		status, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("POST %s with a stalled body: no answer: %v", path, err)
		}
		if path == "/mcp" && !strings.Contains(status, "408") {
			t.Errorf("POST /mcp with a stalled body: %q, want 408", status)
		}
		// The rest of the answer, then the connection closes.
		for {
			if _, err = br.ReadString('\n'); err != nil {
				break
			}
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("POST %s with a stalled body: the connection is still open after 60s", path)
		}
		conn.Close()
	}
}
