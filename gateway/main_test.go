package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestMain lets the test binary stand in for the skillgate binary: the
// gateway re-executes os.Executable() as `plugin serve NAME` to run its
// built-in executors out of process.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[2] == "serve" {
		ex, ok := builtin.New(os.Args[3], builtin.PluginLogger())
		if !ok {
			fmt.Fprintln(os.Stderr, "no built-in executor", os.Args[3])
			os.Exit(2)
		}
		sdk.Serve(ex)
		if c, ok := ex.(interface{ Close() error }); ok {
			_ = c.Close()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
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
	cfg, err := config.Parse(strings.NewReader(yaml), name, func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &strings.Builder{}
	lw := &lockedWriter{w: logs, mu: make(chan struct{}, 1)}
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
	r := &running{gw: gw, url: "http://" + ln.Addr().String(), log: lw}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gateway: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("gateway did not stop within 30s")
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", lw.String())
		}
	})
	// Serve calls Start, which returns once every source had a first try;
	// wait for the listener to answer.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(r.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway never answered /healthz: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
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
