package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestCompletionPassesThrough runs server-everything over streamable HTTP
// behind a proxy that keeps the result of its completion/complete answer:
// the executor returns those bytes unchanged, hasMore: false and total
// included (mcp-go's typed mcp.Completion drops both, omitempty).
func TestCompletionPassesThrough(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	port := testenv.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(argv[0], argv[1], "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	p := testenv.Start(t, cmd)
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var upstream json.RawMessage // the result the server sent for completion/complete
	target, _ := url.Parse("http://" + addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Header.Get("X-Test-Method") != "completion/complete" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		upstream = resultOf(body)
		mu.Unlock()
		return nil
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := peekBody(r)
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		r.Header.Set("X-Test-Method", m.Method)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections() // the standing GET stream
		ts.Close()
	})

	h := newHarness(t)
	h.load("everything", map[string]any{"url": ts.URL + "/mcp", "protocol_version": "2025-11-25"})
	res, err := h.c.Call(context.Background(), sdk.CallRequest{Source: "everything", Method: "completion/complete",
		Params: json.RawMessage(`{"ref":{"type":"ref/prompt","name":"completable-prompt"},"argument":{"name":"department","value":"E"}}`)}, &sdktest.Recorder{})
	if err != nil {
		t.Fatalf("completion/complete: %v", err)
	}
	mu.Lock()
	want := upstream
	mu.Unlock()
	if !bytes.Contains(want, []byte(`"hasMore":false`)) {
		t.Fatalf("server-everything answered %s; the test needs an answer with hasMore: false", want)
	}
	t.Logf("the server sent %s", want)
	if !bytes.Equal(res, want) {
		t.Fatalf("the executor returned\n%s\nthe server sent\n%s", res, want)
	}
}

// resultOf returns the result of the JSON-RPC response in body, sent as
// JSON or as an event stream.
func resultOf(body []byte) json.RawMessage {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &r) == nil && r.Result != nil {
		return r.Result
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && json.Unmarshal([]byte(strings.TrimSpace(data)), &r) == nil && r.Result != nil {
			return r.Result
		}
	}
	return nil
}
