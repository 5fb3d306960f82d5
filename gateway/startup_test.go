package gateway_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
)

// installHung puts into dir, as the plugin name, a program that never
// completes the go-plugin handshake: the host waits its start timeout
// (10 s) for it.
func installHung(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// sourceState returns the state of the source name in Status.
func sourceState(gw *gateway.Gateway, name string) string {
	for _, s := range gw.Status() {
		if s.Name == name {
			return s.State
		}
	}
	return ""
}

// startWait is how long an MCP request that comes while the gateway
// starts waits for the start at most (gateway.startWait).
const startWait = 5 * time.Second

// checkFirstList checks that a client's first tools/list, answered at
// answered (has says whether it had fast__whoami), has the quick server's
// tools. It must when the server was ready within startWait of begin (the
// gateway's start began after begin), for until then the request waits
// for the start. On a machine so loaded that the server was not, the list
// may come without them: then they must come with the list_changed that
// follows, as later lists (list) have them.
func checkFirstList(t *testing.T, gw *gateway.Gateway, begin, answered time.Time, has bool, list func() bool) {
	t.Helper()
	if has {
		return
	}
	var fast gateway.SourceStatus
	for _, s := range gw.Status() {
		if s.Name == "fast" {
			fast = s
		}
	}
	switch {
	case fast.State == "ready" && fast.Since.Sub(begin) < startWait:
		t.Errorf("the first tools/list lacks the quick server's tools, though the server was ready %v after the start began, within the %v requests wait for the start",
			fast.Since.Sub(begin), startWait)
		return
	case fast.State != "ready" && answered.Sub(begin) < startWait:
		t.Errorf("the first tools/list lacks the quick server's tools: it was answered %v after the start began, without waiting for the server (%+v) or for %v",
			answered.Sub(begin), fast, startWait)
		return
	}
	t.Logf("the quick server took longer than %v to load on this machine (%+v): its tools come later", startWait, fast)
	for deadline := time.Now().Add(60 * time.Second); !list(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the quick server's tools were never listed (it is %+v)", fast)
		}
	}
}

// TestServesWhileStarting starts a gateway with a quick server and a
// plugin whose first load the test holds. /healthz answers while the load
// is held; /readyz says the gateway is starting; an MCP client that comes
// meanwhile is answered (after the wait for the start, 5 s), and its first
// tools/list has the quick server's tools (see checkFirstList). The held
// load, not a timeout, decides when the start ends, so no assertion
// depends on how fast the machine is.
func TestServesWhileStarting(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	dir := t.TempDir()
	release := installHeld(t, dir, "held")
	begin := time.Now()
	r := serveGateway(t, "test.yaml", richServers(bin, "fast=fast")+"plugins: {dirs: ["+dir+"]}\n", nil)
	if st := sourceState(r.gw, "held"); st == "ready" || st == "failed" {
		t.Fatalf("/healthz answered only once the held plugin's load had ended (it is %q)", st)
	}
	var body struct {
		Ready    bool `json:"ready"`
		Starting bool `json:"starting"`
	}
	if code := r.readyz(t, &body); code != http.StatusServiceUnavailable || body.Ready || !body.Starting {
		t.Errorf("/readyz while starting: %d %+v; want 503, not ready, starting", code, body)
	}
	// A request that waited for the whole start would wait for the
	// release, which comes only after the answers: a minute's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	names := toolNamesOf(t, ctx, c)
	answered := time.Now()
	if st := sourceState(r.gw, "held"); st == "ready" || st == "failed" {
		t.Errorf("the first tools/list was answered only once the held plugin's load had ended (it is %q)", st)
	}
	checkFirstList(t, r.gw, begin, answered, names["fast__whoami"], func() bool { return toolNamesOf(t, ctx, c)["fast__whoami"] })
	release()
	r.waitStarted(t)
	if st := sourceState(r.gw, "held"); st != "ready" {
		t.Errorf("the held plugin is %q once released and the start is over; want ready", st)
	}
	if names := toolNamesOf(t, ctx, c); !names["held__pid"] || !names["fast__whoami"] {
		t.Errorf("tools/list after the start lacks the held plugin's or the quick server's tools: %v", names)
	}
}

// TestStdioServesWhileStarting is TestServesWhileStarting over stdio: the
// client's initialize and first tools/list are answered while the held
// plugin's load holds up the start, and the list has the quick server's
// tools.
func TestStdioServesWhileStarting(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	dir := t.TempDir()
	release := installHeld(t, dir, "held")
	begin := time.Now()
	p, gw := startStdio(t, richServers(bin, "fast=fast")+"plugins: {dirs: ["+dir+"]}\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if st := sourceState(gw, "held"); st == "ready" || st == "failed" {
		t.Errorf("initialize was answered only once the held plugin's load had ended (it is %q)", st)
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	hasFast := func() bool {
		list, err := p.request(ctx, "tools/list", `{}`)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		return bytes.Contains(list, []byte(`"fast__whoami"`))
	}
	first := hasFast()
	checkFirstList(t, gw, begin, time.Now(), first, hasFast)
	release()
}

// TestRefusedWhileStarting: while a hung plugin holds up the start, a
// request the access rules refuse (a foreign Origin) is refused at once,
// not after the wait for the start (5 s) that admitted requests get.
func TestRefusedWhileStarting(t *testing.T) {
	dir := t.TempDir()
	installHung(t, dir, "hung")
	r := serveGateway(t, "test.yaml", "plugins: {dirs: ["+dir+"]}\n", nil)
	begin := time.Now()
	req, err := http.NewRequest(http.MethodPost, r.url+"/mcp", bytes.NewReader([]byte(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	took := time.Since(begin)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin while starting: %d, want 403", resp.StatusCode)
	}
	if took > 3*time.Second {
		t.Errorf("the refusal came after %v: it waited for the start", took)
	}
}
