package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/gateway/config"
)

// listChanges counts the list_changed notifications of each kind that
// reach events: it waits for want's (up to 30 s: a loaded machine may
// deliver them late), then until it has been quiet for quiet, for any
// more.
func listChanges(t *testing.T, events <-chan []byte, want map[string]int, quiet time.Duration) map[string]int {
	t.Helper()
	got := map[string]int{}
	deadline := time.After(30 * time.Second)
	for !reached(got, want) {
		select {
		case msg, ok := <-events:
			if !ok {
				t.Fatal("the session's SSE stream ended")
			}
			countListChange(got, msg)
		case <-deadline:
			return got
		}
	}
	for {
		select {
		case msg, ok := <-events:
			if !ok {
				t.Fatal("the session's SSE stream ended")
			}
			countListChange(got, msg)
		case <-time.After(quiet):
			return got
		}
	}
}

// countListChange counts msg in got if it is a list_changed notification.
func countListChange(got map[string]int, msg []byte) {
	var n struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(msg, &n) == nil && strings.HasSuffix(n.Method, "/list_changed") {
		got[strings.TrimSuffix(strings.TrimPrefix(n.Method, "notifications/"), "/list_changed")]++
	}
}

// reached reports whether got counts at least want of each kind.
func reached(got, want map[string]int) bool {
	for k, n := range want {
		if got[k] < n {
			return false
		}
	}
	return true
}

// TestReloadListChangedOnce reloads a gateway whose client has its
// session's SSE stream open: a reload sends each kind's list_changed at
// most once, and none for a kind whose list it did not change — a server
// restarted with the same definitions changes no list. A reload that
// removes servers and also adds or changes others sends it twice: once as
// the removed servers leave, at once, and once at its end
// (TestReloadRemovesAtOnce).
func TestReloadListChangedOnce(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	r := startGateway(t, richServers(bin, "keep=keep", "change=v1", "drop=drop"), nil)
	r.waitReady(t, "keep", "change", "drop")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	waitCallable(t, ctx, c, "keep__whoami", "change__whoami", "drop__whoami")
	events, err := c.listen(ctx)
	if err != nil {
		t.Fatalf("open the session's SSE stream: %v", err)
	}
	// A client we did not write sees the same: the official Go SDK's.
	takeSDK := sdkListChanges(t, ctx, r.url+"/mcp")
	listChanges(t, events, nil, 500*time.Millisecond) // what was queued before
	takeSDK(nil)

	reload := func(yaml string, extra string) {
		t.Helper()
		cfg, err := config.Parse(strings.NewReader(yaml+extra), "reload.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.gw.Reload(ctx, cfg); err != nil {
			t.Fatalf("Reload: %v", err)
		}
	}
	for _, tc := range []struct {
		name, yaml, extra string
		want              map[string]int
	}{
		// Resource URIs are not namespaced: keep's win, and stay.
		{"add, change and remove servers", richServers(bin, "keep=keep", "change=v2", "add=add"), "",
			map[string]int{"tools": 2, "prompts": 2}},
		{"nothing changed", richServers(bin, "keep=keep", "change=v2", "add=add"), "", map[string]int{}},
		{"a server restarted with the same definitions", richServers(bin, "keep=keep", "change=v3", "add=add"), "", map[string]int{}},
		// A new profile has no clients yet; /mcp lists what it did.
		{"a profile added", richServers(bin, "keep=keep", "change=v3", "add=add"), "profiles:\n  small: {servers: [keep]}\n",
			map[string]int{}},
		{"servers removed and the profile with them", richServers(bin, "keep=keep"), "",
			map[string]int{"tools": 1, "prompts": 1}},
		{"every server removed", "servers: {}\n", "", map[string]int{"tools": 1, "prompts": 1, "resources": 1}},
		{"a server added", richServers(bin, "again=again"), "", map[string]int{"tools": 1, "prompts": 1, "resources": 1}},
	} {
		reload(tc.yaml, tc.extra)
		// A list_changed too many that comes after the quiet time is
		// counted for the next reload, whose counts it spoils.
		got := listChanges(t, events, tc.want, 1500*time.Millisecond)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: list_changed by kind = %v, want %v", tc.name, got, tc.want)
		}
		if got := takeSDK(tc.want); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: the Go SDK's client saw list_changed by kind %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestExecutorRestartLogged kills the executor plugin that runs a stdio
// server: the log line that says the server is ready again shows the
// restart count /readyz shows, not the new process's own count.
func TestExecutorRestartLogged(t *testing.T) {
	r, _, st := restartExecutor(t)
	want := fmt.Sprintf("restarts=%d", st.Restarts)
	pid := fmt.Sprintf("pid=%d", st.PID)
	var line string
	for deadline := time.Now().Add(10 * time.Second); ; {
		for _, l := range strings.Split(r.log.String(), "\n") {
			if strings.Contains(l, `msg="upstream ready"`) && strings.Contains(l, "source=a") && strings.Contains(l, pid) {
				line = l
			}
		}
		if line != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if line == "" {
		t.Fatalf("no upstream ready line for a with %s in the log", pid)
	}
	if !strings.Contains(line, " "+want) {
		t.Errorf("the log says\n  %s\nbut /readyz says %s", line, want)
	}
}

// sdkListChanges connects the official Go SDK's client to url as a
// 2025-11-25 session (closed when the test ends) and returns take: what
// the client counted of each list_changed kind ("tools", "prompts",
// "resources") since the last take, once it counted want's (or 30 s went
// by).
func sdkListChanges(t *testing.T, ctx context.Context, url string) (take func(want map[string]int) map[string]int) {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	count := func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		got[kind]++
	}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "skillgate-test", Version: "1"}, &sdkmcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdkmcp.ToolListChangedRequest) { count("tools") },
		PromptListChangedHandler:   func(context.Context, *sdkmcp.PromptListChangedRequest) { count("prompts") },
		ResourceListChangedHandler: func(context.Context, *sdkmcp.ResourceListChangedRequest) { count("resources") },
	})
	cs, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdkmcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return func(want map[string]int) map[string]int {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			g := got
			if reached(g, want) || time.Now().After(deadline) {
				got = map[string]int{}
				mu.Unlock()
				return g
			}
			mu.Unlock()
		}
	}
}
