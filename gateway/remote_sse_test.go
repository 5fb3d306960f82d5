package gateway_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
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
			c, a := askedClient("four, said the model over SSE")
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
			a.askThrough(t, ctx, cs, "four, said the model over SSE")
		})
	}
}
