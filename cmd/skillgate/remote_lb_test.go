package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// roundRobin serves a reverse proxy that sends each request to the next
// of backends in turn, as a load balancer without sticky sessions does,
// and returns its URL and how many requests each backend got.
func roundRobin(t *testing.T, backends ...string) (string, []*atomic.Int64) {
	t.Helper()
	targets := make([]*url.URL, len(backends))
	counts := make([]*atomic.Int64, len(backends))
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		targets[i], counts[i] = u, new(atomic.Int64)
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := int((next.Add(1) - 1) % uint64(len(targets)))
			counts[i].Add(1)
			r.SetURL(targets[i])
		},
		FlushInterval: -1, // streams (SSE) pass at once
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	// The body is read whole before it is passed on, as load balancers
	// buffer it: httputil.ReverseProxy streams it, and when the backend
	// answers before the Transport has seen the body's end, the server
	// closes the body under it and the Transport drops the connection,
	// cutting the answer (about 1 in 100 here).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, counts
}

// replicas starts n gateways on the same config (server-everything and a
// pipelines folder), each on its own port, and waits until each is ready.
func replicas(t *testing.T, bin string, n int) []string {
	t.Helper()
	argv := testenv.NodeServer(t, "server-everything")
	cfg, _ := pipelineCLIConfig(t)
	writeFile(t, cfg, "pipelines: {dirs: [./pipelines]}\nservers:\n  everything:\n    command: "+argv[0]+"\n    args: ["+strings.Join(argv[1:], ", ")+"]\n")
	var urls []string
	for range n {
		port := testenv.FreePort(t)
		startGatewayProcess(t, bin, cfg, port, "--listen", "127.0.0.1:"+strconv.Itoa(port))
		urls = append(urls, "http://127.0.0.1:"+strconv.Itoa(port))
	}
	return urls
}

// The CLI's --url commands work through a load balancer that spreads
// requests over replicas without sticky sessions: they speak the
// stateless 2026-07-28 revision, which every replica serves.
func TestRemoteThroughRoundRobin(t *testing.T) {
	bin := buildSkillgate(t)
	lb, counts := roundRobin(t, replicas(t, bin, 2)...)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "everything__echo", "--arg", "message=hi"}, "Echo: hi"},
		{[]string{"call", "everything__get-sum", "--arg", "a=1", "--arg", "b=2"}, "3"},
		{[]string{"tools", "list"}, "everything__echo"},
		{[]string{"tools", "list", "--json"}, `"everything__echo"`},
		{[]string{"pipeline", "runs"}, ""},
	} {
		for _, u := range []string{lb, lb + "/mcp"} {
			out, stderr, code := runBin(t, bin, append(c.args, "--url", u)...)
			if code != 0 || !strings.Contains(out, c.want) {
				t.Errorf("%v --url %s through a round-robin proxy: exit %d, stdout %q, stderr %q; want 0 and %q", c.args, u, code, out, stderr, c.want)
			}
		}
	}
	for i, n := range counts {
		if n.Load() == 0 {
			t.Errorf("replica %d got no request: the proxy did not spread them", i)
		}
	}
}

// everythingHTTP starts server-everything's streamable HTTP transport, a
// server that keeps sessions and does not speak 2026-07-28, and returns
// its MCP endpoint.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	argv := testenv.NodeServer(t, "server-everything")
	port := testenv.FreePort(t)
	cmd := exec.Command(argv[0], argv[1], "streamableHttp")
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	p := testenv.Start(t, cmd)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := p.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/mcp"
}

// --url may name any MCP server: one that does not speak 2026-07-28 is
// called in a 2025-11-25 session. Behind a load balancer that spreads a
// session's requests over replicas, it fails with an error that names the
// URL (not the CLI's internal source name) and says what to do.
func TestRemoteSessionServer(t *testing.T) {
	bin := buildSkillgate(t)
	one := everythingHTTP(t)
	out, stderr, code := runBin(t, bin, "call", "echo", "--arg", "message=hi", "--url", one)
	if code != 0 || !strings.Contains(out, "Echo: hi") {
		t.Fatalf("call echo --url %s (a 2025-11-25 server): exit %d, stdout %q, stderr %q", one, code, out, stderr)
	}

	u1, _ := url.Parse(one)
	u2, _ := url.Parse(everythingHTTP(t))
	lb, _ := roundRobin(t, "http://"+u1.Host, "http://"+u2.Host)
	_, stderr, code = runBin(t, bin, "call", "echo", "--arg", "message=hi", "--url", lb+"/mcp")
	if code != 1 || !strings.HasPrefix(stderr, "skillgate: connect to "+lb+"/mcp: ") || strings.Contains(stderr, `"remote"`) ||
		!strings.Contains(stderr, "make sessions sticky") {
		t.Errorf("call through a round-robin proxy to a server with sessions: exit %d, stderr %q; want 1, the URL, no \"remote\", and advice about sticky sessions", code, stderr)
	}
}

// Every --url command says the same, in the same words, when nothing
// listens at the URL.
func TestRemoteUnreachable(t *testing.T) {
	bin := buildSkillgate(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	want := regexp.MustCompile(`^skillgate: connect to http://` + regexp.QuoteMeta(addr) + `/\S*: connection refused: nothing listens at ` +
		regexp.QuoteMeta(addr) + "; is the gateway running\\? `skillgate run` serves http://127.0.0.1:8811/mcp\n$")
	for _, args := range [][]string{
		{"call", "x"}, {"tools", "list"}, {"tools", "list", "--json"}, {"tools", "list", "--tokens"},
		{"servers"}, {"profiles"}, {"pipeline", "runs"},
	} {
		out, stderr, code := runBin(t, bin, append(args, "--url", addr)...)
		if code != 1 || out != "" || !want.MatchString(stderr) {
			t.Errorf("%v --url %s with nothing listening: exit %d, stdout %q, stderr %q; want 1 and %s", args, addr, code, out, stderr, want)
		}
	}
}

// tools list --json --url tells of a server that is not ready on stderr,
// as the table does, and keeps stdout pure JSON; its descriptions are the
// tools' own, whole, from the config and from --url alike.
func TestToolsListJSONURLNotReady(t *testing.T) {
	bin := buildSkillgate(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	dir := t.TempDir()
	long := "Greets someone by name. " + strings.Repeat("It says hello in a friendly way and then goes on about the weather. ", 4)
	writeFiles(t, dir, map[string]string{
		"tools/greet/tool.yaml": fmt.Sprintf("name: greet\ndescription: %q\nruntime: bash\nentry: greet.sh\n", long),
		"tools/greet/greet.sh":  "echo hello\n",
	})
	cfg := dir + "/skillgate.yaml"
	writeFile(t, cfg, `listen: {http: `+addr+`}
tools: {dirs: [./tools]}
servers:
  broken:
    command: sh
    args: ["-c", "echo cannot open the database >&2; exit 3"]
`)
	p := testenv.Start(t, exec.Command(bin, "run", "-c", cfg))
	if err := p.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		out, _, _ := runBin(t, bin, "servers", "--url", addr)
		if regexp.MustCompile(`(?m)^broken +mcp +failed`).MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broken is not failed after 60 s:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, from := range [][]string{{"--url", addr}, {"-c", cfg}} {
		out, stderr, code := runBin(t, bin, append([]string{"tools", "list", "--json"}, from...)...)
		var js struct {
			Tools []struct{ Name, Description string } `json:"tools"`
		}
		if err := json.Unmarshal([]byte(out), &js); err != nil || code != 0 {
			t.Errorf("tools list --json %v: exit %d, stdout is not JSON (%v):\n%s", from, code, err, out)
			continue
		}
		if !strings.Contains(stderr, "server broken failed") {
			t.Errorf("tools list --json %v does not tell of broken on stderr:\n%s", from, stderr)
		}
		found := false
		for _, tl := range js.Tools {
			if strings.HasSuffix(tl.Name, "greet") {
				found = true
				if tl.Description != strings.TrimSpace(long) {
					t.Errorf("tools list --json %v: %s's description %q, want the whole %q", from, tl.Name, tl.Description, long)
				}
			}
		}
		if !found {
			t.Errorf("tools list --json %v: no greet tool:\n%s", from, out)
		}
	}
}
