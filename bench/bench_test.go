package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/bench/internal/fixture"
	"github.com/skillgate/skillgate/bench/internal/mcpclient"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestMain lets the test binary stand in for the skillgate binary (the
// gateway re-executes it as `plugin serve NAME`) and for the upstream
// (`upstream -transport stdio ...`).
func TestMain(m *testing.M) {
	switch {
	case len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[2] == "serve":
		ex, ok := builtin.New(os.Args[3], builtin.PluginLogger())
		if !ok {
			fmt.Fprintln(os.Stderr, "no built-in executor", os.Args[3])
			os.Exit(2)
		}
		sdk.Serve(ex)
		if c, ok := ex.(io.Closer); ok {
			_ = c.Close()
		}
		os.Exit(0)
	case len(os.Args) > 1 && os.Args[1] == "upstream":
		if err := fixture.Main(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "upstream:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkPluginStart times host.Start of the mcp executor (process
// start, go-plugin handshake, Info) and its Close.
func BenchmarkPluginStart(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	spec := host.Spec{Name: "mcp", Path: self, Args: []string{"plugin", "serve", "mcp"}}
	ctx := context.Background()
	for b.Loop() {
		p, err := host.Start(ctx, spec, host.Options{Logger: discard()})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// startGateway serves a gateway in front of one stdio upstream (this test
// binary) on a loopback port until the benchmark ends.
func startGateway(b *testing.B, isolation string) string {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	yaml := fmt.Sprintf("servers:\n  up:\n    command: %q\n    args: [\"upstream\", \"-transport\", \"stdio\", \"-tools\", \"%d\"]\n",
		self, fixture.DefaultTools)
	if isolation != "" {
		yaml += "    isolation: " + isolation + "\n"
	}
	cfg, err := config.Parse(strings.NewReader(yaml), "bench.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: discard(), Executable: self, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gw.Serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("gateway: %v", err)
			}
		case <-time.After(30 * time.Second):
			b.Errorf("gateway did not stop within 30 s")
		}
	})
	url := "http://" + ln.Addr().String() + "/mcp"
	c := mcpclient.NewClient(5 * time.Second)
	ep := &mcpclient.Endpoint{URL: url, Era: mcpclient.Modern}
	for deadline := time.Now().Add(60 * time.Second); ; {
		n, _, err := mcpclient.CountTools(ctx, c, ep)
		if err == nil && n == fixture.DefaultTools+len(disclosure.Names) {
			// Let the start-up list_changed notifications pass: a session
			// that receives one answers over SSE from then on.
			time.Sleep(time.Second)
			return url
		}
		if time.Now().After(deadline) {
			b.Fatalf("gateway never listed %d tools: n=%d err=%v", fixture.DefaultTools, n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startBare serves the fixture's tools from a bare mcp-go streamable HTTP
// server on a loopback port.
func startBare(b *testing.B) string {
	b.Helper()
	srv := httptest.NewServer(server.NewStreamableHTTPServer(fixture.NewServer(fixture.DefaultTools)))
	b.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// target is one side of a comparison: a URL and the echo tool's name there.
type target struct {
	name, url, tool string
}

// targets starts the bare server and the gateway, and with inprocess also
// a gateway running the mcp executor in process.
func targets(b *testing.B, inprocess bool) []target {
	ts := []target{
		{"bare", startBare(b), "echo"},
		{"gateway-process", startGateway(b, ""), "up__echo"},
	}
	if inprocess {
		ts = append(ts, target{"gateway-inprocess", startGateway(b, "inprocess"), "up__echo"})
	}
	return ts
}

// run repeats req sequentially and from 16 goroutines (2 per CPU on the
// reference 2-core machine).
func run(b *testing.B, req mcpclient.Request) {
	ctx := context.Background()
	b.Run("seq", func(b *testing.B) {
		c := mcpclient.NewClient(10 * time.Second)
		for b.Loop() {
			body, _, err := req.Do(ctx, c)
			if err == nil {
				err = mcpclient.Check(body)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("c16", func(b *testing.B) {
		c := mcpclient.NewClient(10 * time.Second)
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				body, _, err := req.Do(ctx, c)
				if err == nil {
					err = mcpclient.Check(body)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkToolsCall calls echo on the bare upstream (the baseline) and
// through the gateway with the executor out of process and in process, in
// the legacy (session) era.
func BenchmarkToolsCall(b *testing.B) {
	for _, t := range targets(b, true) {
		b.Run(t.name, func(b *testing.B) {
			ep, err := mcpclient.Connect(context.Background(), http.DefaultClient, t.url, mcpclient.Legacy)
			if err != nil {
				b.Fatal(err)
			}
			run(b, ep.CallRequest(t.tool))
		})
	}
}

// BenchmarkToolsList lists 51 tools from the bare server and through the
// gateway, in both eras.
func BenchmarkToolsList(b *testing.B) {
	ts := targets(b, false)
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern} {
		for _, t := range ts {
			b.Run(string(e)+"/"+t.name, func(b *testing.B) {
				ep, err := mcpclient.Connect(context.Background(), http.DefaultClient, t.url, e)
				if err != nil {
					b.Fatal(err)
				}
				run(b, ep.ListRequest())
			})
		}
	}
}
