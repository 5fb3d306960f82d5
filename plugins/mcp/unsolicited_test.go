package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestHTTPServerRequestsWithoutCall: an HTTP upstream (mcp-go's server, a
// 2025-11-25 session) sends server requests no client call caused, and no
// client is asked:
//   - from background work while no call runs (mcp-go puts them on the
//     standalone GET stream): sampling and elicitation are refused with
//     invalid params, saying why; roots/list gets the gateway's roots, none;
//   - on the response stream of the gateway's own tools/list (a re-list
//     after list_changed), while a client's call runs: the stream ties it
//     to that tools/list, so it is refused, not handed to the running call.
func TestHTTPServerRequestsWithoutCall(t *testing.T) {
	type outcome struct {
		method string
		res    any
		err    error
	}
	var armed atomic.Bool
	hookOutcome := make(chan outcome, 1)
	hooks := &server.Hooks{}
	var s *server.MCPServer
	hooks.AddOnRequestInitialization(func(ctx context.Context, _ any, message any) error {
		raw, _ := message.(json.RawMessage)
		if !strings.Contains(string(raw), `"tools/list"`) || !armed.CompareAndSwap(true, false) {
			return nil
		}
		// Asked while serving the gateway's tools/list: on its stream.
		req := mcpgo.ElicitationRequest{}
		req.Params.Message = "while listing"
		req.Params.RequestedSchema = map[string]any{"type": "object"}
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res, err := s.RequestElicitation(ctx, req)
		hookOutcome <- outcome{"elicitation/create", res, err}
		return nil
	})
	s = server.NewMCPServer("unsolicited", "1.0.0", server.WithToolCapabilities(true), server.WithElicitation(), server.WithHooks(hooks))
	s.EnableSampling()
	hanging := make(chan struct{}, 1)
	release := make(chan struct{})
	s.AddTool(mcpgo.NewTool("hang"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		hanging <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mcpgo.NewToolResultText("released"), nil
	})
	fire := make(chan struct{})
	outcomes := make(chan outcome, 3)
	s.AddTool(mcpgo.NewTool("later"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		// Background work of the server's, after this call: its requests
		// carry the session only.
		bg := s.WithContext(context.Background(), server.ClientSessionFromContext(ctx))
		go func() {
			<-fire
			ctx, cancel := context.WithTimeout(bg, 20*time.Second)
			defer cancel()
			sampling := mcpgo.CreateMessageRequest{}
			sampling.Messages = []mcpgo.SamplingMessage{{Role: mcpgo.RoleUser, Content: mcpgo.NewTextContent("unsolicited")}}
			sampling.MaxTokens = 10
			//lint:ignore SA1019 the upstream under test asks for sampling as 2025-11-25 servers do
			res, err := s.RequestSampling(ctx, sampling)
			outcomes <- outcome{"sampling/createMessage", res, err}
			roots, err := s.RequestRoots(ctx, mcpgo.ListRootsRequest{})
			outcomes <- outcome{"roots/list", roots, err}
			elicit := mcpgo.ElicitationRequest{}
			elicit.Params.Message = "unsolicited"
			elicit.Params.RequestedSchema = map[string]any{"type": "object"}
			eres, err := s.RequestElicitation(ctx, elicit)
			outcomes <- outcome{"elicitation/create", eres, err}
		}()
		return mcpgo.NewToolResultText("later"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(ts.Close)

	h := newHarness(t)
	h.load("un", map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
	var asked atomic.Int32
	rec := &sdktest.Recorder{RequestFunc: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		asked.Add(1)
		switch method {
		case "roots/list":
			return json.RawMessage(`{"roots":[{"uri":"file:///client-a","name":"a"}]}`), nil
		case "elicitation/create":
			return json.RawMessage(`{"action":"accept","content":{}}`), nil
		}
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"from client a"},"model":"m"}`), nil
	}}
	refused := func(o outcome) {
		t.Helper()
		if o.method == "roots/list" {
			roots, _ := o.res.(*mcpgo.ListRootsResult)
			if o.err != nil || roots == nil || len(roots.Roots) != 0 {
				t.Errorf("roots/list: %+v, %v; want no roots", o.res, o.err)
			}
			return
		}
		// mcp-go's server reports the client's error as "METHOD error CODE: MESSAGE".
		if o.err == nil || !strings.Contains(o.err.Error(), o.method+" error -32602: skillgate: no client call is active") {
			t.Errorf("%s: %+v, %v; want it refused as caused by no client call", o.method, o.res, o.err)
		}
	}

	t.Run("no call running", func(t *testing.T) {
		h.mustCall("un", "later", nil, rec)
		close(fire)
		for range 3 {
			select {
			case o := <-outcomes:
				refused(o)
			case <-time.After(30 * time.Second):
				t.Fatal("the upstream's requests got no answers")
			}
		}
	})

	t.Run("on the stream of the gateway's own request", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := h.c.Call(context.Background(), sdk.CallRequest{Source: "un", Method: "tools/call", Client: "client-a",
				Params: mustJSON(map[string]any{"name": "hang"})}, rec)
			done <- err
		}()
		select {
		case <-hanging:
		case <-time.After(20 * time.Second):
			t.Fatal("the hang call never reached the upstream")
		}
		armed.Store(true)
		s.AddTool(mcpgo.NewTool("grown"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("grown"), nil
		})
		select {
		case o := <-hookOutcome:
			refused(o)
		case <-time.After(30 * time.Second):
			t.Fatal("the gateway never re-listed after list_changed")
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	if n := asked.Load(); n != 0 {
		t.Errorf("a client was asked %d times for requests no call of it caused", n)
	}
}
