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

// TestServesWhileStarting starts a gateway with a quick server and a
// plugin that hangs in its handshake. /healthz answers before the plugin's
// start ends; /readyz says the gateway is starting; an MCP client that
// comes meanwhile is answered, and its first tools/list has the quick
// server's tools.
func TestServesWhileStarting(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	dir := t.TempDir()
	installHung(t, dir, "hung")
	r := serveGateway(t, "test.yaml", richServers(bin, "fast=fast")+"plugins: {dirs: ["+dir+"]}\n", nil)
	if st := sourceState(r.gw, "hung"); st == "failed" {
		t.Fatalf("/healthz answered only once the hung plugin's start had ended (it is %q)", st)
	}
	var body struct {
		Ready    bool `json:"ready"`
		Starting bool `json:"starting"`
	}
	if code := r.readyz(t, &body); code != http.StatusServiceUnavailable || body.Ready || !body.Starting {
		t.Errorf("/readyz while starting: %d %+v; want 503, not ready, starting", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	if names := toolNamesOf(t, ctx, c); !names["fast__whoami"] {
		t.Errorf("the first tools/list lacks the quick server's tools: %v", names)
	}
	if st := sourceState(r.gw, "hung"); st != "starting" {
		t.Errorf("the first tools/list was answered only once the hung plugin's start had ended (it is %q)", st)
	}
	r.waitStarted(t)
	if st := sourceState(r.gw, "hung"); st != "failed" {
		t.Errorf("the hung plugin is %q after the first start; want failed", st)
	}
}

// TestStdioServesWhileStarting is TestServesWhileStarting over stdio: the
// client's initialize and first tools/list are answered before the hung
// plugin's start ends, and the list has the quick server's tools.
func TestStdioServesWhileStarting(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	dir := t.TempDir()
	installHung(t, dir, "hung")
	p, gw := startStdio(t, richServers(bin, "fast=fast")+"plugins: {dirs: ["+dir+"]}\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if st := sourceState(gw, "hung"); st != "starting" {
		t.Errorf("initialize was answered only once the hung plugin's start had ended (it is %q)", st)
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	list, err := p.request(ctx, "tools/list", `{}`)
	if err != nil || !bytes.Contains(list, []byte(`"fast__whoami"`)) {
		t.Errorf("the first tools/list lacks the quick server's tools: %s, %v", list, err)
	}
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
