package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestMCPGoClient drives the gateway with mcp-go's own client (not the
// transport the gateway uses): initialize, list, and a call whose progress
// reaches this client, in both protocol eras. (Sampling relayed to the
// client is covered by the conformance suite, whose client answers it; this
// client did not answer sampling even against the bare conformance server.)
func TestMCPGoClient(t *testing.T) {
	r := startEverything(t)

	for _, tc := range []struct {
		era  string
		opts []client.ClientOption
	}{
		{"2025-11-25", []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20251125)}},
		{"2026-07-28", nil},
	} {
		t.Run(tc.era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := client.NewStreamableHttpClient(r.url + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			c = client.NewClient(c.GetTransport(), tc.opts...)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var mu sync.Mutex
			var progress []float64
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationProgress) {
					mu.Lock()
					defer mu.Unlock()
					if p, ok := n.Params.AdditionalFields["progress"].(float64); ok {
						progress = append(progress, p)
					}
				}
			})
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = tc.era
			init.Params.ClientInfo = mcp.Implementation{Name: "skillgate-test", Version: "1"}
			res, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if res.ServerInfo.Name != "skillgate" {
				t.Errorf("server info = %+v", res.ServerInfo)
			}
			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tl := range tools.Tools {
				found = found || tl.Name == "everything__trigger-long-running-operation"
			}
			if !found {
				t.Fatalf("tools/list lacks everything__trigger-long-running-operation (%d tools)", len(tools.Tools))
			}

			call := mcp.CallToolRequest{}
			call.Params.Name = "everything__trigger-long-running-operation"
			call.Params.Arguments = map[string]any{"duration": 1, "steps": 4}
			call.Params.Meta = &mcp.Meta{ProgressToken: "tok-" + tc.era}
			out, err := c.CallTool(ctx, call)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if len(out.Content) == 0 || !strings.Contains(mcp.GetTextFromContent(out.Content[0]), "completed") {
				t.Fatalf("result = %+v", out)
			}
			mu.Lock()
			got := append([]float64(nil), progress...)
			mu.Unlock()
			if len(got) != 4 || got[3] != 4 {
				t.Errorf("progress notifications = %v, want 1..4", got)
			}

		})
	}
}
