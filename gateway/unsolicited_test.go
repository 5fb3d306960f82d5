package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestUnsolicitedServerRequests: a stdio upstream (the faultserver) sends
// sampling, elicitation and roots requests after its call has answered,
// while no call of it runs. No client is asked, though one is connected
// that declared all three: sampling and elicitation are refused with
// invalid params (as the spec has a client refuse a request tied to no
// request of its own) and a message that says why; roots/list is answered
// with the gateway's roots, none.
func TestUnsolicitedServerRequests(t *testing.T) {
	fault := goBuild(t, "./plugins/mcp/testdata/faultserver", "faultserver")
	r := startGateway(t, "servers:\n  f:\n    command: "+fault+"\n    args: [-extras]\n", nil)
	r.waitReady(t, "f")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var asked atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "declares-all", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 the gateway must relay sampling while servers use it
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			//lint:ignore SA1019 see above
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answered"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	//lint:ignore SA1019 a client that declares roots must not be asked for them either
	c.AddRoots(&mcp.Root{URI: "file:///client-workspace", Name: "workspace"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	dir := t.TempDir()
	for _, method := range []string{"sampling/createMessage", "elicitation/create", "roots/list"} {
		t.Run(method, func(t *testing.T) {
			name := strings.ReplaceAll(method, "/", "-")
			then, out := filepath.Join(dir, name+".go"), filepath.Join(dir, name+".answer")
			text, isError := goSDKCall(t, ctx, cs, "f__later", map[string]any{"method": method, "then": then, "out": out})
			if isError || text != "later" {
				t.Fatalf("f__later: %q (isError %v)", text, isError)
			}
			// The call has answered: nothing of the upstream's runs now.
			if err := os.WriteFile(then, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.WaitForFile(t, out, 30*time.Second, nil)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var answer struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &answer); err != nil {
				t.Fatalf("the upstream's record of the answer: %v: %s", err, b)
			}
			if method == "roots/list" {
				if answer.Error != nil || string(answer.Result) != `{"roots":[]}` {
					t.Errorf("roots/list answered %s, want no roots", b)
				}
				return
			}
			if answer.Error == nil || answer.Error.Code != -32602 || !strings.Contains(answer.Error.Message, "no client call") {
				t.Errorf("%s answered %s, want invalid params saying no client call caused it", method, b)
			}
		})
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the client was asked %d times for requests no call of it caused", n)
	}
}
