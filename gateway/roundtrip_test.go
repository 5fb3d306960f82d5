package gateway_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRoundTripThroughBothHops: an upstream speaking 2026-07-28 asks for
// input the multi round-trip way (it answers input_required and expects
// the call again with the answers); the mcp executor turns that into a
// request for the calling client, and the gateway hands it to the client
// as its era wants (an SSE request for 2025-11-25, input_required again
// for 2026-07-28). The official Go SDK answers in both eras.
func TestRoundTripThroughBothHops(t *testing.T) {
	s := server.NewMCPServer("mrtr", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewTool("confirm"), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if resp, ok := req.Params.InputResponses["sure"]; ok {
			if err := resp.DecodeFor(mcpgo.MethodElicitationCreate); err != nil || resp.Elicitation == nil {
				return mcpgo.NewToolResultError("the answer did not decode"), nil
			}
			return mcpgo.NewToolResultText("answer=" + string(resp.Elicitation.Action) + " state=" + req.Params.RequestState), nil
		}
		return server.NewInputRequestBuilder("upstream-state").Elicit("sure", mcpgo.ElicitationParams{
			Message:         "Really?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		}).ToolResult(), nil
	})
	up := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(up.Close) // registered first, so it runs after the gateway stopped: its executor holds a listen stream
	r := startGateway(t, `
servers:
  mrtr: {url: "${URL}", protocol_version: "2026-07-28"}
`, map[string]string{"URL": up.URL})
	r.waitReady(t, "mrtr")

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var asked string
			c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
				},
			})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			text, isErr := goSDKCall(t, ctx, cs, "mrtr__confirm", map[string]any{})
			if isErr || text != "answer=accept state=upstream-state" {
				t.Errorf("mrtr__confirm: %q (isError %v)", text, isErr)
			}
			if asked != "Really?" {
				t.Errorf("the client was asked %q", asked)
			}
		})
	}
}
