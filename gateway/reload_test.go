package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// richServers renders a config serving richserver once per name, each with
// -tag set to its tag: "name=tag,name=tag".
func richServers(bin string, servers ...string) string {
	var b strings.Builder
	b.WriteString("servers:\n")
	for _, s := range servers {
		name, tag, _ := strings.Cut(s, "=")
		fmt.Fprintf(&b, "  %s:\n    command: %s\n    args: [\"-tag\", %q]\n", name, strconv.Quote(bin), tag)
	}
	return b.String()
}

// TestReload reloads a running gateway with a config where one server is
// unchanged, one changed (its args differ), one removed and one added.
func TestReload(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	r := startGateway(t, richServers(bin, "keep=keep", "change=v1", "drop=drop"), nil)
	st := waitPIDs(t, r, "keep", "change", "drop")
	for _, n := range []string{"keep", "change", "drop"} {
		if st[n].PID == 0 || !testenv.Alive(st[n].PID) {
			t.Fatalf("%s: no live pid in /readyz: %+v", n, st[n])
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A client session opened before the reload, with a call to the
	// unchanged server in flight across it.
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	// /readyz can say ready a moment before the front end serves the
	// source's tools (TestServedWhenReloaded is about that); here, wait.
	waitCallable(t, ctx, c, "keep__whoami", "change__whoami", "drop__whoami")
	wantWho(t, ctx, c, "keep__whoami", fmt.Sprintf("keep %d", st["keep"].PID))
	events, err := c.listen(ctx)
	if err != nil {
		t.Fatalf("open the session's SSE stream: %v", err)
	}
	// Drain what was queued for the session before the reload.
	for quiet := false; !quiet; {
		select {
		case <-events:
		case <-time.After(500 * time.Millisecond):
			quiet = true
		}
	}
	type result struct {
		res []byte
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		res, err := c.call(ctx, "tools/call", `{"name":"keep__sleep","arguments":{"ms":2000}}`)
		inflight <- result{res, err}
	}()
	time.Sleep(200 * time.Millisecond) // let the call reach the upstream

	cfg, err := config.Parse(strings.NewReader(richServers(bin, "keep=keep", "change=v2", "add=add")), "reload.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	st2 := waitPIDs(t, r, "keep", "change", "add")
	waitTools(t, ctx, c, []string{"keep__whoami", "change__whoami", "add__whoami"}, []string{"drop__whoami"})
	waitCallable(t, ctx, c, "change__whoami", "add__whoami")

	t.Run("unchanged", func(t *testing.T) {
		if st2["keep"].PID != st["keep"].PID || st2["keep"].Restarts != st["keep"].Restarts {
			t.Errorf("keep was restarted: before %+v, after %+v", st["keep"], st2["keep"])
		}
		select {
		case r := <-inflight:
			if r.err != nil || !bytes.Contains(r.res, []byte("slept 2000 ms as keep")) {
				t.Errorf("the call in flight across the reload: %s, %v", r.res, r.err)
			}
		case <-ctx.Done():
			t.Fatal("the call in flight across the reload never ended")
		}
		wantWho(t, ctx, c, "keep__whoami", fmt.Sprintf("keep %d", st["keep"].PID))
	})
	t.Run("changed", func(t *testing.T) {
		if st2["change"].PID == 0 || st2["change"].PID == st["change"].PID {
			t.Errorf("change kept pid %d; want a new process (after: %+v)", st["change"].PID, st2["change"])
		}
		waitGone(t, st["change"].PID, "the changed server's old process")
		wantWho(t, ctx, c, "change__whoami", fmt.Sprintf("v2 %d", st2["change"].PID))
	})
	t.Run("removed", func(t *testing.T) {
		if s, ok := st2["drop"]; ok {
			t.Errorf("/readyz still lists the removed server: %+v", s)
		}
		waitGone(t, st["drop"].PID, "the removed server's process")
		if _, err := c.call(ctx, "tools/call", `{"name":"drop__whoami","arguments":{}}`); err == nil {
			t.Errorf("drop__whoami still answers after its server was removed")
		}
	})
	t.Run("added", func(t *testing.T) {
		if st2["add"].PID == 0 || !testenv.Alive(st2["add"].PID) {
			t.Errorf("add: no live pid: %+v", st2["add"])
		}
		wantWho(t, ctx, c, "add__whoami", fmt.Sprintf("add %d", st2["add"].PID))
	})
	t.Run("tools/list", func(t *testing.T) {
		// The session opened before the reload is told its tools changed.
		timeout := time.After(15 * time.Second)
	wait:
		for {
			select {
			case msg, ok := <-events:
				if !ok {
					t.Fatal("the session's SSE stream ended without notifications/tools/list_changed")
				}
				if bytes.Contains(msg, []byte(`"notifications/tools/list_changed"`)) {
					break wait
				}
			case <-timeout:
				t.Fatal("no notifications/tools/list_changed on the session's SSE stream within 15s of the reload")
			}
		}
		names := toolNamesOf(t, ctx, c)
		for _, want := range []string{"keep__whoami", "change__whoami", "add__whoami"} {
			if !names[want] {
				t.Errorf("tools/list lacks %s", want)
			}
		}
		for n := range names {
			if strings.HasPrefix(n, "drop__") {
				t.Errorf("tools/list still has %s", n)
			}
		}
		// A new session sees the same.
		fresh := toolNamesOf(t, ctx, newRawClient(t, ctx, r.url+"/mcp", legacyVersion))
		if len(fresh) != len(names) {
			t.Errorf("a new session lists %d tools, the old one %d", len(fresh), len(names))
		}
	})
}

// TestReloadBinary runs `skillgate run -c FILE` and changes FILE: the new
// server's tools appear within seconds; then it changes FILE in a way the
// file watcher cannot see (same size, same modification time) and sends
// SIGHUP, which must reload it too.
func TestReloadBinary(t *testing.T) {
	testenv.Subreaper(t)
	before := testenv.ChildPIDs()
	rich := goBuild(t, "./gateway/testdata/richserver", "richserver")
	bin := goBuild(t, "./cmd/skillgate", "skillgate")
	dir := t.TempDir()
	path := filepath.Join(dir, "skillgate.yaml")
	writeConfig(t, path, richServers(rich, "one=1"))

	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	base := "http://" + addr
	p := testenv.Start(t, exec.Command(bin, "run", "-c", path, "--listen", addr))
	waitSources(t, p, base, 60*time.Second, func(st map[string]gateway.SourceStatus) bool {
		return st["one"].State == "ready"
	})

	t.Run("file change", func(t *testing.T) {
		writeConfig(t, path, richServers(rich, "one=1", "two=2"))
		st := waitSources(t, p, base, 15*time.Second, func(st map[string]gateway.SourceStatus) bool {
			return st["two"].State == "ready" && st["two"].Tools > 0
		})
		if st["one"].State != "ready" {
			t.Errorf("one after the reload: %+v", st["one"])
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := newRawClient(t, ctx, base+"/mcp", legacyVersion)
		if names := toolNamesOf(t, ctx, c); !names["two__whoami"] || !names["one__whoami"] {
			t.Errorf("tools/list after the file changed lacks one__whoami or two__whoami: %v", names)
		}
	})

	t.Run("SIGHUP", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// "two" becomes "six": same size; the old modification time is
		// put back, so only SIGHUP can make the gateway read the file.
		writeConfig(t, path, richServers(rich, "one=1", "six=6"))
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if fi2, _ := os.Stat(path); fi2 == nil || fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
			t.Fatalf("could not make the change invisible to the watcher: %v %v", fi, fi2)
		}
		// The watcher polls every second: three polls must not reload.
		time.Sleep(3500 * time.Millisecond)
		if st := readyz(t, base); st["six"].Name != "" || st["two"].Name == "" {
			t.Fatalf("the file watcher saw a change it cannot see; this test cannot tell SIGHUP apart: %v", st)
		}
		if err := testenv.Signal(p.PID(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitSources(t, p, base, 15*time.Second, func(st map[string]gateway.SourceStatus) bool {
			_, two := st["two"]
			return st["six"].State == "ready" && !two
		})
	})

	// SIGTERM ends the gateway and everything it started.
	if err := testenv.Signal(p.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		if err := p.Err(); err != nil {
			t.Errorf("skillgate exited with %v after SIGTERM; want status 0\n%s", err, p.Output())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("skillgate still runs 30s after SIGTERM")
	}
	waitNoNewChildren(t, before, 15*time.Second)
}

// writeConfig replaces the file at path the way editors do: a new file
// renamed over the old one.
func writeConfig(t *testing.T, path, yaml string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// readyz returns the sources /readyz lists, by name.
func readyz(t *testing.T, base string) map[string]gateway.SourceStatus {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var body struct {
		Sources []gateway.SourceStatus `json:"sources"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	out := map[string]gateway.SourceStatus{}
	for _, s := range body.Sources {
		out[s.Name] = s
	}
	return out
}

// waitSources polls /readyz until ok accepts what it lists.
func waitSources(t *testing.T, p *testenv.Process, base string, timeout time.Duration, ok func(map[string]gateway.SourceStatus) bool) map[string]gateway.SourceStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := readyz(t, base)
		if st != nil && ok(st) {
			return st
		}
		select {
		case <-p.Done():
			t.Fatalf("skillgate exited: %v\n%s", p.Err(), p.Output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after %v: %+v\nskillgate output:\n%s", timeout, st, p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wantWho calls a whoami tool and checks its answer.
func wantWho(t *testing.T, ctx context.Context, c *rawClient, tool, want string) {
	t.Helper()
	res, err := c.call(ctx, "tools/call", `{"name":"`+tool+`","arguments":{}}`)
	if err != nil {
		t.Errorf("%s: %v", tool, err)
		return
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(res, &r) != nil || len(r.Content) == 0 || r.Content[0].Text != want {
		t.Errorf("%s = %s; want the text %q", tool, res, want)
	}
}

// waitTools polls tools/list until it has every name of want and none of
// unwanted.
func waitTools(t *testing.T, ctx context.Context, c *rawClient, want, unwanted []string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		names := toolNamesOf(t, ctx, c)
		ok := true
		for _, n := range want {
			ok = ok && names[n]
		}
		for _, n := range unwanted {
			ok = ok && !names[n]
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/list after 15s: %v; want %v and none of %v", names, want, unwanted)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPIDs waits until /readyz lists each named source as ready with a
// pid. (The pid can come a moment after the ready state: the executor
// reports it asynchronously; TestServedWhenReloaded is about that.)
func waitPIDs(t *testing.T, r *running, names ...string) map[string]gateway.SourceStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := r.waitReady(t, names...)
		ok := true
		for _, n := range names {
			ok = ok && st[n].PID != 0
		}
		if ok {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("sources ready without a pid after 30s: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitCallable calls each tool until it answers without an error.
func waitCallable(t *testing.T, ctx context.Context, c *rawClient, tools ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, tool := range tools {
		for {
			_, err := c.call(ctx, "tools/call", `{"name":"`+tool+`","arguments":{}}`)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still fails after 15s: %v", tool, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// toolNamesOf lists the tools a client sees.
func toolNamesOf(t *testing.T, ctx context.Context, c *rawClient) map[string]bool {
	t.Helper()
	res, err := c.call(ctx, "tools/list", `{}`)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("tools/list: %v: %s", err, res)
	}
	names := map[string]bool{}
	for _, tl := range r.Tools {
		names[tl.Name] = true
	}
	return names
}

// waitGone waits until pid no longer runs.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for testenv.Alive(pid) {
		if time.Now().After(deadline) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			t.Errorf("%s (pid %d: %s) still runs 15s later", what, pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServedWhenReloaded checks that what Reload reports as done is what
// clients get: once it has returned, /readyz shows the added stdio
// server ready with its pid, tools/list has its tools, each of them
// answers tools/call, and the removed server's tools are no longer listed. A client (or a script that sends SIGHUP and then
// calls) must neither get "tool not found" for a tool that is ready and
// listed, nor see a tool whose server is gone. The front end receives
// catalog snapshots asynchronously, so the window is short and the check
// is repeated.
func TestServedWhenReloaded(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	with, err := config.Parse(strings.NewReader(richServers(bin, "a=a", "c=c")), "with-c.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	without, err := config.Parse(strings.NewReader(richServers(bin, "a=a")), "without-c.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := startGateway(t, richServers(bin, "a=a"), nil)
	r.waitReady(t, "a")
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	waitCallable(t, ctx, c, "a__whoami")
	const rounds = 60
	var late []string
	checks := 0
	for i := range rounds {
		if err := r.gw.Reload(ctx, with); err != nil {
			t.Fatalf("Reload: %v", err)
		}
		st := r.status(t)
		if st["c"].State != "ready" {
			t.Fatalf("round %d: Reload returned with c %+v", i, st["c"])
		}
		checks += 3
		if st["c"].PID == 0 {
			late = append(late, fmt.Sprintf("round %d: Reload added c and returned; /readyz says c is ready with no pid: %+v", i, st["c"]))
		}
		names := toolNamesOf(t, ctx, c)
		if !names["c__whoami"] {
			late = append(late, fmt.Sprintf("round %d: Reload added c and returned, /readyz says c is ready; tools/list has %d tools, no c__whoami", i, len(names)))
		} else if _, err := c.call(ctx, "tools/call", `{"name":"c__whoami","arguments":{}}`); err != nil {
			late = append(late, fmt.Sprintf("round %d: c is ready and tools/list has c__whoami; tools/call c__whoami: %v", i, err))
		}
		if err := r.gw.Reload(ctx, without); err != nil {
			t.Fatalf("Reload: %v", err)
		}
		checks++
		if names := toolNamesOf(t, ctx, c); names["c__whoami"] {
			late = append(late, fmt.Sprintf("round %d: Reload removed c and returned; tools/list still has c__whoami", i))
		}
	}
	if len(late) > 0 {
		t.Errorf("%d of %d checks found the front end behind what Reload had done:\n  %s", len(late), checks, strings.Join(late, "\n  "))
	}
}

// TestReloadAccess rotates the bearer token with a reload: the old token
// stops working at once. /readyz shows its details only to requests that
// pass the Host and token checks.
func TestReloadAccess(t *testing.T) {
	r := startGateway(t, "auth: {tokens: [old-token]}\nservers: {}\n", nil)
	post := func(token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, r.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	readyz := func(token, host string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, r.url+"/readyz", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz: %d, %v", resp.StatusCode, err)
		}
		return body
	}
	if got := post("old-token"); got != http.StatusOK {
		t.Fatalf("old token before the reload: %d", got)
	}
	for _, c := range []struct{ token, host string }{{"", ""}, {"wrong", ""}, {"old-token", "evil.example"}} {
		if body := readyz(c.token, c.host); body["ready"] != true || body["sources"] != nil || body["detail"] == nil {
			t.Fatalf("/readyz with token %q, host %q: %v", c.token, c.host, body)
		}
	}
	if body := readyz("old-token", ""); body["sources"] == nil {
		t.Fatalf("/readyz with the token: %v", body)
	}

	cfg, err := config.Parse(strings.NewReader("auth: {tokens: [new-token]}\nservers: {}\n"), "reload.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if got := post("old-token"); got != http.StatusUnauthorized {
		t.Fatalf("old token after the reload: %d", got)
	}
	if got := post("new-token"); got != http.StatusOK {
		t.Fatalf("new token after the reload: %d", got)
	}
	if body := readyz("new-token", ""); body["sources"] == nil {
		t.Fatalf("/readyz with the new token: %v", body)
	}
}

// TestFailedSourceStatus polls a server that cannot start: its restart
// count only grows as the gateway retries, and its last error reads the
// same whether the load or the executor's report set it.
func TestFailedSourceStatus(t *testing.T) {
	r := startGateway(t, "servers:\n  gone: {command: /nonexistent/mcp-server}\n", nil)
	prev, seen := 0, map[string]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st := r.status(t)["gone"]
		if st.Restarts < prev {
			t.Fatalf("restarts went from %d to %d", prev, st.Restarts)
		}
		prev = st.Restarts
		if st.LastError != "" {
			seen[st.LastError] = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if prev < 2 {
		t.Fatalf("restarts = %d after 5 s of retries", prev)
	}
	for e := range seen {
		if strings.HasPrefix(e, "load source") || !strings.Contains(e, "/nonexistent/mcp-server") {
			t.Errorf("last error %q", e)
		}
	}

	// A call of one of its tools says why the tool is missing, in both
	// eras; a name no server's namespace starts is not found, plainly.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, era := range []string{legacyVersion, modernVersion} {
		c := newRawClient(t, ctx, r.url+"/mcp", era)
		_, err := c.call(ctx, "tools/call", `{"name":"gone__anything","arguments":{}}`)
		if err == nil || !strings.Contains(err.Error(), `-32602`) || !strings.Contains(err.Error(), `its server \"gone\" is failed`) || !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
			t.Errorf("%s: call of a missing server's tool: %v", era, err)
		}
		if _, err := c.call(ctx, "tools/call", `{"name":"nope__anything","arguments":{}}`); err == nil || strings.Contains(err.Error(), "its server") {
			t.Errorf("%s: call of an unknown tool: %v", era, err)
		}
	}
	if _, err := r.gw.CallTool(ctx, "gone__anything", nil, nil); err == nil || !strings.Contains(err.Error(), `its server "gone" is failed`) {
		t.Errorf("CallTool: %v", err)
	}
}

// TestCollisionsLogged runs two servers offering the same resource URIs:
// the running gateway logs each collision once, where an operator looks.
func TestCollisionsLogged(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	r := startGateway(t, richServers(bin, "one=one", "two=two"), nil)
	r.waitReady(t, "one", "two")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(r.log.String(), `msg="name collision" kind=resource name=rich://docs/readme`) {
		if time.Now().After(deadline) {
			t.Fatalf("no collision logged for rich://docs/readme:\n%s", r.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.Count(r.log.String(), `name=rich://docs/readme`); n != 1 {
		t.Fatalf("the collision was logged %d times", n)
	}
}

// TestExecutorRestartStatus kills the executor plugin that runs a stdio
// server: once it is back, the server's status shows the server's own pid
// (not the executor's) and one more restart than before.
func TestExecutorRestartStatus(t *testing.T) {
	r, before, st := restartExecutor(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	wantWho(t, ctx, c, "a__whoami", fmt.Sprintf("a %d", st.PID))
	if st.Restarts != before.Restarts+1 {
		t.Fatalf("restarts %d -> %d; want one more", before.Restarts, st.Restarts)
	}
}

// restartExecutor starts a gateway running richserver as source "a",
// SIGKILLs its mcp executor and waits until "a" is ready again under a
// new upstream: it returns the gateway and a's status before and after.
func restartExecutor(t *testing.T) (r *running, before, after gateway.SourceStatus) {
	t.Helper()
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	r = startGateway(t, richServers(bin, "a=a"), nil)
	before = waitPIDs(t, r, "a")["a"]
	var execPID int
	for _, e := range r.gw.ExecutorsStatus() {
		if e.Name == "mcp" {
			execPID = e.PID
		}
	}
	if execPID == 0 {
		t.Fatalf("no mcp executor pid: %+v", r.gw.ExecutorsStatus())
	}
	if err := testenv.Signal(execPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		after = r.status(t)["a"]
		if after.State == "ready" && after.PID != 0 && after.PID != before.PID {
			return r, before, after
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the executor was killed: %+v", after)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReadyMeansServedDuringReload polls /readyz while a reload runs that
// adds a quick server and a slow one (the reload ends when both had a
// first try): /readyz must not show the quick server ready before
// tools/list has its tools.
func TestReadyMeansServedDuringReload(t *testing.T) {
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	r := startGateway(t, richServers(bin, "a=a"), nil)
	r.waitReady(t, "a")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	yaml := richServers(bin, "a=a", "c=c") +
		fmt.Sprintf("  slow:\n    command: /bin/sh\n    args: [\"-c\", %q]\n", "sleep 2; exec "+strconv.Quote(bin)+" -tag slow")
	cfg, err := config.Parse(strings.NewReader(yaml), "reload.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.gw.Reload(ctx, cfg) }()
	var early []string
	for reloading := true; reloading; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Reload: %v", err)
			}
			reloading = false
		default:
		}
		if st := r.status(t); st["c"].State == "ready" {
			if names := toolNamesOf(t, ctx, c); !names["c__whoami"] {
				early = append(early, fmt.Sprintf("/readyz says c is ready; tools/list has %d tools, no c__whoami", len(names)))
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(early) > 0 {
		t.Errorf("during the reload, %d times:\n  %s", len(early), strings.Join(early, "\n  "))
	}
	r.waitReady(t, "a", "c", "slow")
	if names := toolNamesOf(t, ctx, c); !names["c__whoami"] || !names["slow__whoami"] {
		t.Errorf("after the reload tools/list lacks c__whoami or slow__whoami: %v", names)
	}
}
