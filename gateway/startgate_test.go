package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// startGateConfig holds the gateway's start as long as the test likes: the
// plugin held's first load waits for release, and start_wait (10 m) is far
// longer than any deadline here, so a request held by the start wait is
// held until the release.
func startGateConfig(t *testing.T) (yaml string, release func()) {
	t.Helper()
	dir := t.TempDir()
	release = installHeld(t, dir, "held")
	return "limits: {start_wait: 10m}\nplugins: {dirs: [" + dir + "]}\n", release
}

// capabilitiesOf returns the capabilities member of an initialize result.
func capabilitiesOf(t *testing.T, res []byte) string {
	t.Helper()
	var r struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Capabilities == nil {
		t.Fatalf("initialize result without capabilities: %s (%v)", res, err)
	}
	return string(r.Capabilities)
}

// wantCapabilities checks what the gateway must announce from the start,
// whatever its sources have loaded: it tells of list changes, for the
// tools that come later.
func wantCapabilities(t *testing.T, caps string) {
	t.Helper()
	var c struct {
		Tools     struct{ ListChanged bool } `json:"tools"`
		Prompts   struct{ ListChanged bool } `json:"prompts"`
		Resources struct{ ListChanged, Subscribe bool }
	}
	if err := json.Unmarshal([]byte(caps), &c); err != nil {
		t.Fatal(err)
	}
	if !c.Tools.ListChanged || !c.Prompts.ListChanged || !c.Resources.ListChanged || !c.Resources.Subscribe {
		t.Errorf("capabilities announced while starting lack listChanged or subscribe: %s", caps)
	}
}

// listAfterRelease sends tools/list (list) while the start is held, then
// the requests of between, which must be answered while the list waits;
// it releases the start and checks that the list has the held plugin's
// tools: it waited for the start, so it is complete.
func listAfterRelease(t *testing.T, list func() ([]byte, error), between func(), release func()) {
	t.Helper()
	type answer struct {
		res []byte
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := list()
		first <- answer{res, err}
	}()
	between() // requests answered while the list waits
	select {
	case a := <-first:
		t.Errorf("tools/list was answered while the held plugin's load still held up the start: %s, %v", a.res, a.err)
	default:
	}
	release()
	a := <-first
	if a.err != nil || !bytes.Contains(a.res, []byte(`"held__pid"`)) {
		t.Errorf("the first tools/list lacks the held plugin's tools: %s, %v", a.res, a.err)
	}
}

// TestStartGateStdio runs `skillgate run --stdio` with a plugin whose
// first load hangs until the test releases it: the client's initialize,
// ping and logging/setLevel are answered while the load hangs (the start
// wait holds only what reads the catalog), with the capabilities the
// config implies, and the first tools/list waits for the start and has
// the plugin's tools.
func TestStartGateStdio(t *testing.T) {
	bin := goBuild(t, "./cmd/skillgate", "skillgate")
	yaml, release := startGateConfig(t)
	defer release() // on a failure too: the gateway's stop waits for the load
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, stderr := startStdioGateway(t, bin, cfg)
	defer func() {
		if err := p.close(t); err != nil {
			t.Errorf("exit: %v\nstderr:\n%s", err, stderr.String())
		}
	}()
	// A request held by the start would wait for the release, which
	// comes only after the answers: a minute's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"start-gate","version":"0"}}`)
	if err != nil {
		t.Fatalf("initialize while the held plugin's load hangs: %v\nstderr:\n%s", err, stderr.String())
	}
	wantCapabilities(t, capabilitiesOf(t, res))
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	listAfterRelease(t, func() ([]byte, error) { return p.request(ctx, "tools/list", `{}`) }, func() {
		for _, m := range []struct{ method, params string }{{"ping", ""}, {"logging/setLevel", `{"level":"info"}`}} {
			if _, err := p.request(ctx, m.method, m.params); err != nil {
				t.Errorf("%s while the held plugin's load hangs: %v", m.method, err)
			}
		}
	}, release)
}

// TestStartGateHTTP is TestStartGateStdio over HTTP, in both eras: a
// 2025-11-25 client's initialize and ping, and a 2026-07-28 client's
// server/discover, are answered while /readyz says the gateway is
// starting; the capabilities are those announced once it has started;
// the first tools/list of each waits for the start and is complete.
func TestStartGateHTTP(t *testing.T) {
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			yaml, release := startGateConfig(t)
			defer release()
			r := serveGateway(t, "test.yaml", yaml, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			starting := func(what string) {
				t.Helper()
				var body struct {
					Starting bool `json:"starting"`
				}
				if r.readyz(t, &body); !body.Starting {
					t.Fatalf("%s: /readyz says the gateway is no longer starting, though the held plugin's load hangs", what)
				}
			}
			var initCaps string
			if version == legacyVersion {
				c := &rawClient{url: r.url + "/mcp", version: version}
				res, hdr, err := c.exchange(ctx, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"start-gate","version":"0"}}`, true)
				if err != nil {
					t.Fatalf("initialize while the held plugin's load hangs: %v", err)
				}
				starting("initialize answered")
				initCaps = capabilitiesOf(t, res)
				wantCapabilities(t, initCaps)
				c.session = hdr.Get("Mcp-Session-Id")
				if err := c.notify(ctx, "notifications/initialized"); err != nil {
					t.Fatal(err)
				}
				listAfterRelease(t, func() ([]byte, error) { return c.call(ctx, "tools/list", `{}`) }, func() {
					if _, err := c.call(ctx, "ping", `{}`); err != nil {
						t.Errorf("ping while the held plugin's load hangs: %v", err)
					}
					starting("ping answered")
				}, release)
				r.waitStarted(t)
				after := &rawClient{url: r.url + "/mcp", version: version}
				res, _, err = after.exchange(ctx, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"after-start","version":"0"}}`, true)
				if err != nil {
					t.Fatal(err)
				}
				if got := capabilitiesOf(t, res); got != initCaps {
					t.Errorf("capabilities while starting:\n%s\nonce started:\n%s", initCaps, got)
				}
				return
			}
			c := &rawClient{url: r.url + "/mcp", version: version}
			if _, err := c.call(ctx, "server/discover", `{}`); err != nil {
				t.Fatalf("server/discover while the held plugin's load hangs: %v", err)
			}
			starting("server/discover answered")
			// 2026-07-28 has no ping: server/discover again.
			listAfterRelease(t, func() ([]byte, error) { return c.call(ctx, "tools/list", `{}`) }, func() {
				if _, err := c.call(ctx, "server/discover", `{}`); err != nil {
					t.Errorf("server/discover while tools/list waits: %v", err)
				}
				starting("server/discover answered")
			}, release)
		})
	}
}
