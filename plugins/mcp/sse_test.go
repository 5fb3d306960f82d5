package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// startEverythingSSE runs server-everything's legacy HTTP+SSE transport on
// addr and returns its /sse URL.
func startEverythingSSE(t *testing.T, addr string) (*testenv.Process, string) {
	t.Helper()
	argv := testenv.NodeServer(t, "server-everything")
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(argv[0], argv[1], "sse")
	cmd.Env = append(os.Environ(), "PORT="+port)
	p := testenv.Start(t, cmd)
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return p, "http://" + addr + "/sse"
}

// TestEverythingSSE runs the reference server-everything over the legacy
// HTTP+SSE transport: the gateway declares sampling, elicitation and roots
// there too and answers the server's requests through the calling client,
// so the server offers its 16 tools (13 without those capabilities), and a
// server that goes away is reconnected once it is back.
func TestEverythingSSE(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	base := warmBaseline(t)
	t.Run("cases", func(t *testing.T) {
		p, url := startEverythingSSE(t, addr)
		h := newHarness(t)
		for _, name := range []string{"sse", "auto"} {
			spec := map[string]any{"url": url, "transport": "sse"}
			if name == "auto" {
				spec = map[string]any{"url": url} // streamable HTTP refused: SSE
			}
			defs := h.load(name, spec)
			names := toolNames(t, defs.Tools)
			for _, want := range []string{"echo", "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
				if !slices.Contains(names, want) {
					t.Fatalf("%s: tools = %v; want %s (conditional on the client's capabilities)", name, names, want)
				}
			}
		}

		// server-everything asks for roots 350 ms after a session starts,
		// and a call running then rightly passes that request to its
		// client; it may overlap the requests counted here, so it is
		// answered but not counted (and asked is locked).
		var mu sync.Mutex
		var asked []string
		rec := &sdktest.Recorder{RequestFunc: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method == "roots/list" {
				return json.RawMessage(`{"roots":[]}`), nil
			}
			mu.Lock()
			asked = append(asked, method)
			mu.Unlock()
			switch method {
			case "sampling/createMessage":
				if !strings.Contains(string(params), "what is 2+2") {
					return nil, fmt.Errorf("params %s", params)
				}
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"four over sse"},"model":"test-model","stopReason":"endTurn"}`), nil
			case "elicitation/create":
				return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
			}
			return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: method}
		}}
		if got := text(t, h.mustCall("sse", "trigger-sampling-request", map[string]any{"prompt": "what is 2+2"}, rec)); !strings.Contains(got, "four over sse") {
			t.Fatalf("sampling over SSE = %q", got)
		}
		if got := string(h.mustCall("sse", "trigger-elicitation-request", map[string]any{}, rec)); !strings.Contains(got, "Ada") {
			t.Fatalf("elicitation over SSE = %s", got)
		}
		mu.Lock()
		got := slices.Clone(asked)
		mu.Unlock()
		if !slices.Equal(got, []string{"sampling/createMessage", "elicitation/create"}) {
			t.Fatalf("the client was asked %v", got)
		}
		rec = &sdktest.Recorder{}
		h.mustCall("sse", "trigger-long-running-operation", map[string]any{"duration": 0.4, "steps": 4}, rec)
		if len(rec.Progresses) != 4 {
			t.Fatalf("progress over SSE = %+v", rec.Progresses)
		}

		// The server goes away: the stream ends, the source fails, and it
		// reconnects once the server is back.
		_ = p.Stop()
		h.waitChange(20*time.Second, "sse failed", func(ch sdk.Change) bool {
			return ch.Source == "sse" && ch.Status != nil && ch.Status.State == StateFailed
		})
		startEverythingSSE(t, addr)
		h.waitChange(60*time.Second, "sse ready again", func(ch sdk.Change) bool {
			return ch.Source == "sse" && ch.Status != nil && ch.Status.State == StateReady && ch.Status.Restarts >= 1
		})
		if got := text(t, h.mustCall("sse", "echo", map[string]any{"message": "back"}, nil)); got != "Echo: back" {
			t.Fatalf("echo after the restart = %q", got)
		}
	})
	checkNoLeaks(t, base)
}
