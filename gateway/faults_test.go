package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestUpstreamFaultsThroughTheGateway: an upstream that crashes mid-call
// fails that call fast with a clear error, the other server keeps serving,
// and the crashed one is restarted; an upstream's list_changed reaches a
// connected client and the new tool is callable.
func TestUpstreamFaultsThroughTheGateway(t *testing.T) {
	fault := goBuild(t, "./plugins/mcp/testdata/faultserver", "faultserver")
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

// TestKilledGatewayLeavesNothing kills the gateway with SIGKILL, which it
// cannot handle: its executor plugin notices its stdin closing and exits,
// taking the stdio upstream with it.
func TestKilledGatewayLeavesNothing(t *testing.T) {
	testenv.Subreaper(t) // orphans become our children, so a leak shows
	t.Cleanup(func() {
		for _, pid := range testenv.ChildPIDs() { // only after a failure
			_ = testenv.Signal(pid, syscall.SIGKILL)
		}
	})
	skillgate := goBuild(t, "./cmd/skillgate", "skillgate")
	rich := goBuild(t, "./gateway/testdata/richserver", "richserver")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	port := testenv.FreePort(t)
	yaml := fmt.Sprintf("listen: {http: 127.0.0.1:%d}\n", port) + richServers(rich, "a=a")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(skillgate, "run", "-c", cfg)
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("gateway never ready:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(testenv.ChildPIDs()); n < 1 {
		t.Fatalf("expected the gateway among our children, found %d", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	testenv.WaitNoChildren(t, 15*time.Second)
}
