package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
)

// served is a gateway serving cfg on a loopback port, which the test stops
// with stop (or the cleanup does).
type served struct {
	*running
	stop func() error // cancels Serve and returns what it returned
}

// serveConfig serves an already parsed config (serveGateway parses
// strictly, as `skillgate validate` does) until stop or the test's end.
func serveConfig(t *testing.T, cfg *config.Config) *served {
	t.Helper()
	lw := &lockedWriter{w: &strings.Builder{}, mu: make(chan struct{}, 1)}
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelDebug})), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gw.Serve(ctx, ln) }()
	var stopped bool
	var stopErr error
	s := &served{running: &running{gw: gw, url: "http://" + ln.Addr().String(), log: lw}}
	s.stop = func() error {
		if stopped {
			return stopErr
		}
		stopped = true
		cancel()
		select {
		case stopErr = <-done:
		case <-time.After(60 * time.Second):
			stopErr = errors.New("the gateway did not stop within 60s")
		}
		return stopErr
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("gateway: %v", err)
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", lw.String())
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway never answered /healthz: %v", err)
		}
	}
}

// TestConfigUnsetVariableFailsOneServer: a ${VAR} that is not set in one
// server's entry fails that server only, as `skillgate run` reads the
// config (config.ParseForRun): /readyz shows it failed with the file:line
// and what to do, the other server is served, one WARN is logged, and a
// reload that leaves the entry as it is logs nothing more; one that gives
// the variable a default starts the server.
func TestConfigUnsetVariableFailsOneServer(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	entry := func(token string) string {
		return "servers:\n" +
			"  ok:\n    command: " + strconv.Quote(bin) + "\n    args: [-tag, ok]\n" +
			"  gh:\n    command: " + strconv.Quote(bin) + "\n    args: [-tag, gh]\n" +
			"    env: {GITHUB_PERSONAL_ACCESS_TOKEN: '" + token + "'}\n"
	}
	parse := func(yaml string) *config.Config {
		t.Helper()
		cfg, err := config.ParseForRun(strings.NewReader(yaml), "run.yaml", func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("ParseForRun: %v", err)
		}
		return cfg
	}
	s := serveConfig(t, parse(entry("${GITHUB_TOKEN}")))
	s.waitStarted(t)
	st := s.status(t)
	if st["ok"].State != "ready" {
		t.Errorf("ok is %+v; want ready", st["ok"])
	}
	want := "not started: run.yaml:8:41: servers.gh.env.GITHUB_PERSONAL_ACCESS_TOKEN: undefined variable ${GITHUB_TOKEN}; set GITHUB_TOKEN in the environment"
	if gh := st["gh"]; gh.State != "failed" || !strings.HasPrefix(gh.LastError, want) {
		t.Errorf("gh is %+v; want failed with %q...", gh, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, s.url+"/mcp", legacyVersion)
	if names := toolNamesOf(t, ctx, c); !names["ok__whoami"] || names["gh__whoami"] {
		t.Errorf("tools/list = %v; want ok's tools and none of gh's", names)
	}
	warnings := func() int { return strings.Count(s.log.String(), `level=WARN msg="server not started" source=gh`) }
	if n := warnings(); n != 1 {
		t.Errorf("%d warnings for gh, want 1", n)
	}

	if err := s.gw.Reload(ctx, parse(entry("${GITHUB_TOKEN}"))); err != nil {
		t.Fatal(err)
	}
	if gh := s.status(t)["gh"]; gh.State != "failed" || warnings() != 1 {
		t.Errorf("after a reload with the same entry gh is %+v, with %d warnings; want failed, 1", gh, warnings())
	}
	if err := s.gw.Reload(ctx, parse(entry("${GITHUB_TOKEN:-none}"))); err != nil {
		t.Fatal(err)
	}
	s.waitReady(t, "ok", "gh")
}

// TestConfigStaleInReadyz: /readyz shows the config file that failed to
// load for a reload, and why, until a reload succeeds.
func TestConfigStaleInReadyz(t *testing.T) {
	r := startGateway(t, "servers: {}\n", nil)
	type body struct {
		Ready  bool                 `json:"ready"`
		Config gateway.ConfigStatus `json:"config"`
	}
	var b body
	r.readyz(t, &b)
	if b.Config.File != "test.yaml" || b.Config.Stale || b.Config.Loaded.IsZero() {
		t.Errorf("config before a failed reload: %+v", b.Config)
	}
	_, err := config.Parse(strings.NewReader("limits: {start_wait: soon}\n"), "test.yaml", nil)
	if err == nil {
		t.Fatal("a bad config parsed")
	}
	r.gw.ReloadFailed(err)
	b = body{}
	r.readyz(t, &b)
	if !b.Ready || !b.Config.Stale || b.Config.Failed == nil ||
		b.Config.Error != `test.yaml:1:22: limits.start_wait: "soon" is not a duration; write it as 500ms, 10s or 1m30s` {
		t.Errorf("after a failed reload: %+v; want ready, the config stale with the error", b)
	}
	cfg, err := config.Parse(strings.NewReader("servers: {}\n"), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	b = body{}
	r.readyz(t, &b)
	if b.Config.Stale || b.Config.Error != "" || b.Config.Failed != nil {
		t.Errorf("after a reload: %+v; want not stale", b.Config)
	}
}

// TestStartupWaitFromConfig: a client that comes while the gateway starts
// waits for the start as long as limits.start_wait says, longer than the
// 5 s the wait once was: its first tools/list has the tools of a plugin
// whose load the test holds for longer than that.
func TestStartupWaitFromConfig(t *testing.T) {
	dir := t.TempDir()
	release := installHeld(t, dir, "held")
	r := serveGateway(t, "test.yaml", "limits: {start_wait: 10m}\nplugins: {dirs: ["+dir+"]}\n", nil)
	defer release() // on a failure too: the gateway's stop waits for the load
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type answer struct {
		list []byte
		err  error
	}
	first := make(chan answer, 1)
	go func() {
		// initialize waits for the start (at most start_wait), then the list.
		c := &rawClient{url: r.url + "/mcp", version: legacyVersion}
		res, hdr, err := c.exchange(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw-test-client","version":"0"}}`, true)
		if err == nil && hdr.Get("Mcp-Session-Id") == "" {
			err = errors.New("no session: " + string(res))
		}
		if err == nil {
			c.session = hdr.Get("Mcp-Session-Id")
			if err = c.notify(ctx, "notifications/initialized"); err == nil {
				res, err = c.call(ctx, "tools/list", `{}`)
			}
		}
		first <- answer{res, err}
	}()
	select {
	case a := <-first:
		t.Fatalf("the client was answered while the held plugin's load still held up the start, though start_wait is 10m: %s, %v", a.list, a.err)
	case <-time.After(6 * time.Second):
	}
	release()
	a := <-first
	if a.err != nil || !bytes.Contains(a.list, []byte(`"held__pid"`)) {
		t.Errorf("the first tools/list lacks the held plugin's tools: %s, %v", a.list, a.err)
	}
}

// TestStartupWaitLogged: when limits.start_wait passes before every
// source had its first try, the gateway serves clients and logs which
// sources are still starting, with what to do.
func TestStartupWaitLogged(t *testing.T) {
	dir := t.TempDir()
	release := installHeld(t, dir, "held")
	r := serveGateway(t, "test.yaml", "limits: {start_wait: 100ms}\nplugins: {dirs: ["+dir+"]}\n", nil)
	defer release()
	want := `level=WARN msg="serving clients before every server has started: their tools are listed once ready, with notifications/tools/list_changed; ` +
		`a client that lists tools only once misses them (raise limits.start_wait)" start_wait=100ms starting=[held]`
	waitFor(t, func() bool { return strings.Contains(r.log.String(), want) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	if names := toolNamesOf(t, ctx, c); names["held__pid"] {
		t.Errorf("the held plugin's tools are listed before its load ended: %v", names)
	}
	if st := sourceState(r.gw, "held"); st != "starting" {
		t.Errorf("held is %q; want starting", st)
	}
}

// TestStopEndsStreams stops a gateway that has a client's GET stream open
// and a call in flight: the stream ends at once (it would hold the stop
// until limits.drain_timeout), the call gets its drain time and finishes,
// and the log says why the gateway stops.
func TestStopEndsStreams(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	cfg, err := config.Parse(strings.NewReader(richServers(bin, "keep=keep")+"limits: {drain_timeout: 1m}\n"), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := serveConfig(t, cfg)
	s.waitReady(t, "keep")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, s.url+"/mcp", legacyVersion)
	waitCallable(t, ctx, c, "keep__whoami")
	events, err := c.listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		res []byte
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		res, err := c.call(ctx, "tools/call", `{"name":"keep__sleep","arguments":{"ms":3000}}`)
		inflight <- result{res, err}
	}()
	time.Sleep(500 * time.Millisecond) // let the call reach the gateway

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	streamEnded := make(chan struct{})
	go func() {
		for range events {
		}
		close(streamEnded)
	}()
	select {
	case <-streamEnded:
	case <-time.After(30 * time.Second):
		t.Fatal("the client's GET stream is still open 30s after the gateway began to stop (drain_timeout is 1m)")
	}
	if r := <-inflight; r.err != nil || !bytes.Contains(r.res, []byte("slept 3000 ms as keep")) {
		t.Errorf("the call in flight when the gateway began to stop: %s, %v", r.res, r.err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if log := s.log.String(); !strings.Contains(log, `level=INFO msg=stopping reason="context canceled" drain_timeout=1m0s`) {
		t.Errorf("the log does not say the gateway is stopping:\n%s", log)
	}
}
