package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestMain lets the test binary stand in for the skillgate binary: the
// gateway re-executes os.Executable() as `plugin serve NAME` to run its
// built-in executors out of process, served as the skillgate binary serves
// them (host.ServeBuiltin), shutdown included.
func TestMain(m *testing.M) {
	switch os.Getenv(envStub) {
	case "server":
		stubServer()
		os.Exit(0)
	case "plugin":
		sdk.Serve(&probeExecutor{})
		os.Exit(0)
	}
	if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[2] == "serve" {
		log := builtin.PluginLogger()
		ex, ok := builtin.New(os.Args[3], log)
		if !ok {
			fmt.Fprintln(os.Stderr, "no built-in executor", os.Args[3])
			os.Exit(2)
		}
		host.ServeBuiltin(ex, log)
		os.Exit(0)
	}
	os.Exit(testenv.RunWithOwnState(m))
}

// The test binary doubles as a stdio MCP server, chosen by envStub.
const (
	envStub      = "SKILLGATE_GATEWAY_TEST_STUB"       // "server" or "plugin" (probe_test.go)
	envHelperPID = "SKILLGATE_GATEWAY_TEST_HELPER_PID" // where the server writes its helper's pid
)

// stubServer is a stdio MCP server with one tool that exits when its stdin
// closes. First it starts a helper that leaves its session and ignores
// SIGTERM, and writes the helper's pid to envHelperPID.
func stubServer() {
	helper := exec.Command("sh", "-c", `trap "" TERM; exec sleep 1000`)
	testenv.Setsid(helper)
	if err := helper.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Getenv(envHelperPID), []byte(strconv.Itoa(helper.Process.Pid)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testenv.ServeStubMCP("stub", os.Stdin, os.Stdout)
}

// TestStopReachesServerDescendants stops a stdio server whose helper left
// its session and ignores SIGTERM, by a reload that removes the server and
// by the gateway's graceful stop: the executor (out of process, as the
// skillgate binary runs it) must kill the helper too, though the server
// exits on stdin EOF and leaves it orphaned.
func TestStopReachesServerDescendants(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"reload", "close"} {
		t.Run(how, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "helper")
			r := startGateway(t, fmt.Sprintf("servers:\n  stub: {command: %q, env: {%s: server, %s: %q, GORACE: atexit_sleep_ms=0}}\n",
				exe, envStub, envHelperPID, pidFile), nil)
			r.waitReady(t, "stub")
			data, err := os.ReadFile(pidFile)
			helper, _ := strconv.Atoi(string(data))
			if err != nil || !testenv.Alive(helper) {
				t.Fatalf("the server's helper is not running: %q, %v", data, err)
			}
			t.Cleanup(func() { _ = testenv.Signal(helper, syscall.SIGKILL) })
			if how == "reload" {
				cfg, err := config.Parse(strings.NewReader("servers: {}\n"), "test.yaml", nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.gw.Reload(context.Background(), cfg); err != nil {
					t.Fatal(err)
				}
			} else if err := r.gw.Close(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for testenv.Alive(helper) {
				if time.Now().After(deadline) {
					t.Fatalf("after the %s, the server's helper %d (a session of its own) still runs", how, helper)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// running is a gateway serving HTTP on a free loopback port for one test.
type running struct {
	gw  *gateway.Gateway
	url string        // http://127.0.0.1:PORT
	log *lockedWriter // the gateway log, safe to read while it runs
	// token is sent to /readyz, for a config with auth.tokens.
	token string
}

// startGateway parses yaml (with ${VAR} from vars) and serves it until the
// test ends. It waits until every source had its first load.
func startGateway(t *testing.T, yaml string, vars map[string]string) *running {
	t.Helper()
	return startGatewayNamed(t, "test.yaml", yaml, vars)
}

// startGatewayNamed is startGateway for a config read from the file name,
// whose folder anchors relative paths.
func startGatewayNamed(t *testing.T, name, yaml string, vars map[string]string) *running {
	t.Helper()
	r := serveGateway(t, name, yaml, vars)
	r.waitStarted(t)
	return r
}

// waitStarted waits until /readyz no longer says the gateway is starting:
// every source had its first try.
func (r *running) waitStarted(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var body struct {
			Starting bool `json:"starting"`
		}
		r.readyz(t, &body)
		if !body.Starting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway is still starting after 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveGateway is startGatewayNamed without waiting for the sources: it
// returns once /healthz answers.
func serveGateway(t *testing.T, name, yaml string, vars map[string]string) *running {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml), name, func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return serveConfig(t, cfg).running
}

// waitReady waits until /readyz lists every named source as ready.
func (r *running) waitReady(t *testing.T, names ...string) map[string]gateway.SourceStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := r.status(t)
		ok := true
		for _, n := range names {
			if st[n].State != "ready" {
				ok = false
			}
		}
		if ok {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("sources not ready: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyz decodes the gateway's /readyz into body and returns its status.
func (r *running) readyz(t *testing.T, body any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.url+"/readyz", nil)
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func (r *running) status(t *testing.T) map[string]gateway.SourceStatus {
	t.Helper()
	var body struct {
		Ready   bool                   `json:"ready"`
		Sources []gateway.SourceStatus `json:"sources"`
	}
	if code := r.readyz(t, &body); body.Ready != (code == 200) {
		t.Fatalf("/readyz: ready=%v with status %d", body.Ready, code)
	}
	out := map[string]gateway.SourceStatus{}
	for _, s := range body.Sources {
		out[s.Name] = s
	}
	return out
}

// newLogged parses yaml as the config file name and makes a gateway on it
// whose log (text, info and up) the returned writer holds.
func newLogged(t *testing.T, name, yaml string) (*gateway.Gateway, *lockedWriter) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedWriter{w: &strings.Builder{}, mu: make(chan struct{}, 1)}
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil)), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return gw, logs
}

type lockedWriter struct {
	mu chan struct{}
	w  *strings.Builder
}

func (l *lockedWriter) lock() {
	if l.mu == nil {
		panic("lockedWriter not initialised")
	}
	l.mu <- struct{}{}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.lock()
	defer func() { <-l.mu }()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.lock()
	defer func() { <-l.mu }()
	return l.w.String()
}

var _ io.Writer = (*lockedWriter)(nil)

// jsonArgv renders argv as a YAML flow list.
func jsonArgv(argv []string) string {
	b, _ := json.Marshal(argv)
	return string(b)
}
