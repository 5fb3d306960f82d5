package gateway_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestRemoteSSEServerRequests federates server-everything reached over
// the legacy HTTP+SSE transport (its own `sse` mode, a real process): it
// lists the tools it offers only to a client that answers sampling and
// elicitation, and what it asks in the middle of a call reaches the
// official Go SDK's handlers through the gateway, in both eras.
func TestRemoteSSEServerRequests(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	port := strconv.Itoa(testenv.FreePort(t))
	cmd := exec.Command(argv[0], argv[1], "sse")
	cmd.Env = append(os.Environ(), "PORT="+port)
	p := testenv.Start(t, cmd)
	if err := p.WaitTCP("127.0.0.1:"+port, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	r := startGateway(t, `
servers:
  everything: {url: "http://127.0.0.1:${PORT}/sse", transport: sse}
`, map[string]string{"PORT": port})
	r.waitReady(t, "everything")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			var mu sync.Mutex
			var sampled, elicited string
			c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
				//lint:ignore SA1019 sampling is deprecated from 2026-07-28 on, but server-everything uses it
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					defer mu.Unlock()
					if len(req.Params.Messages) > 0 {
						if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
							sampled = tc.Text
						}
					}
					//lint:ignore SA1019 see above
					return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "four, said the model over SSE"}}, nil
				},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					elicited = req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
				},
			})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"everything__trigger-sampling-request", "everything__trigger-elicitation-request", "everything__get-roots-list"} {
				if !slices.Contains(names, want) {
					t.Fatalf("tools/list lacks %s: %v", want, names)
				}
			}
			text, isErr := goSDKCall(t, ctx, cs, "everything__trigger-sampling-request", map[string]any{"prompt": "what is 2+2"})
			if isErr || !strings.Contains(text, "four, said the model over SSE") {
				t.Errorf("sampling: %q (isError %v); want the client's answer in the result", text, isErr)
			}
			text, isErr = goSDKCall(t, ctx, cs, "everything__trigger-elicitation-request", map[string]any{})
			if isErr || !strings.Contains(text, "Ada Lovelace") {
				t.Errorf("elicitation: %q (isError %v); want the client's answer in the result", text, isErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(sampled, "what is 2+2") || elicited == "" {
				t.Errorf("the client was asked to sample %q and to elicit %q", sampled, elicited)
			}
		})
	}
}
