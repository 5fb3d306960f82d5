package gateway_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/internal/testenv"
)

// buildFaultServer builds plugins/mcp's misbehaving fixture server.
func buildFaultServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "faultserver")
	cmd := exec.Command("go", "build", "-o", bin, "./plugins/mcp/testdata/faultserver")
	cmd.Dir = testenv.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build faultserver: %v\n%s", err, out)
	}
	return bin
}

// TestUpstreamFaultsThroughTheGateway: an upstream that crashes mid-call
// fails that call fast with a clear error, the other server keeps serving,
// and the crashed one is restarted; an upstream's list_changed reaches a
// connected client and the new tool is callable.
func TestUpstreamFaultsThroughTheGateway(t *testing.T) {
	fault := buildFaultServer(t)
	r := startGateway(t, `
servers:
  f:
    command: ${FAULT}
  conf:
    url: ${CONF}
`, map[string]string{"FAULT": fault, "CONF": testenv.ConformanceServer(t)})
	st := r.waitReady(t, "f", "conf")
	firstPID := st["f"].PID

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A client with a session, to see list_changed.
	c, err := client.NewStreamableHttpClient(r.url + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	c = client.NewClient(c.GetTransport(), client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	changed := 0
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			mu.Lock()
			changed++
			mu.Unlock()
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "faults-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}

	t.Run("list_changed", func(t *testing.T) {
		if _, err := r.gw.CallTool(ctx, "f__grow", json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, ok := r.gw.Snapshot().Tool("f__grown-1"); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("f__grown-1 never appeared in the catalog")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// The client learns of it (the notification rides on its next request).
		list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tl := range list.Tools {
			found = found || tl.Name == "f__grown-1"
		}
		if !found {
			t.Errorf("tools/list lacks f__grown-1")
		}
		deadline = time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := changed
			mu.Unlock()
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("no notifications/tools/list_changed reached the client")
				break
			}
			_, _ = c.ListTools(ctx, mcp.ListToolsRequest{})
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("crash mid-call", func(t *testing.T) {
		start := time.Now()
		_, err := r.gw.CallTool(ctx, "f__crash", json.RawMessage(`{}`), nil)
		if err == nil {
			t.Fatal("a call whose upstream was killed succeeded")
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("the call took %v to fail", time.Since(start))
		}
		if !strings.Contains(err.Error(), "f") {
			t.Errorf("error does not name the server: %v", err)
		}
		if _, err := r.gw.CallTool(ctx, "conf__test_simple_text", json.RawMessage(`{}`), nil); err != nil {
			t.Errorf("the other server stopped serving: %v", err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			st := r.status(t)
			if f := st["f"]; f.State == "ready" && f.PID != 0 && f.PID != firstPID {
				if f.Restarts < 1 {
					t.Errorf("restarted upstream shows %d restarts", f.Restarts)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("f was not restarted: %+v", st["f"])
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := r.gw.CallTool(ctx, "f__grow", json.RawMessage(`{}`), nil); err != nil {
			t.Errorf("after the restart: %v", err)
		}
	})
}
