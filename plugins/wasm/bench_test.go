package wasm

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// Run with: go test -run '^$' -bench . -benchmem ./plugins/wasm/
// (not under -race, whose instrumentation of wazero's host side skews
// the numbers). The p50-us and p99-us metrics are per-call latencies.

// benchExec is an in-process executor on the test run's warm compilation
// cache with the guest of style loaded as source "g".
func benchExec(b *testing.B, style string, opts ...Option) *Executor {
	b.Helper()
	e := New(append([]Option{WithLogger(quietLogger()), WithCacheDir(cacheDir)}, opts...)...)
	b.Cleanup(func() { _ = e.Close() })
	if _, err := e.Load(b.Context(), sdk.LoadRequest{Source: "g", Kind: Kind, Spec: toolFolder(b, style, nil)}); err != nil {
		b.Fatal(err)
	}
	return e
}

var (
	echoCall = sdk.CallRequest{Source: "g", Method: "tools/call", Params: json.RawMessage(`{"name":"guest","arguments":{"op":"echo","text":"hello"}}`)}
	// pingCall makes the reactor guest copy stdin to stdout without
	// decoding it, leaving what the executor costs.
	pingCall = sdk.CallRequest{Source: "g", Method: "tools/call", Params: json.RawMessage(`{"name":"guest","arguments":{"op":"ping","text":"hello"}}`)}
)

// timedLoop calls f b.N times and reports the latency percentiles.
func timedLoop(b *testing.B, f func() error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	}
}

func callOK(ctx context.Context, e sdk.Executor, rec sdk.Call) error {
	return callReq(ctx, e, echoCall, rec)
}

func callReq(ctx context.Context, e sdk.Executor, req sdk.CallRequest, rec sdk.Call) error {
	raw, err := e.Call(ctx, req, rec)
	if err == nil && !json.Valid(raw) {
		return &sdk.RPCError{Message: "invalid result"}
	}
	return err
}

// BenchmarkCommandCall is one tools/call of a Go command module (a fresh
// instance per call: instantiate, Go runtime start, _start, close), its
// machine code from the warm compilation cache.
func BenchmarkCommandCall(b *testing.B) {
	e := benchExec(b, StyleCommand)
	ctx := context.Background()
	b.Run("sequential", func(b *testing.B) {
		rec := &sdktest.Recorder{}
		timedLoop(b, func() error { return callOK(ctx, e, rec) })
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			rec := &sdktest.Recorder{}
			for pb.Next() {
				if err := callOK(ctx, e, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkReactorCall is one tools/call of a Go reactor module on a warm
// instance of the pool: "sequential" decodes the arguments and encodes a
// result with encoding/json in the guest, "ping" has the guest copy its
// stdin to stdout (the executor's own cost); "parallel" runs as many calls
// at once as the pool has instances.
func BenchmarkReactorCall(b *testing.B) {
	e := benchExec(b, StyleReactor)
	ctx := context.Background()
	b.Run("sequential", func(b *testing.B) {
		rec := &sdktest.Recorder{}
		timedLoop(b, func() error { return callOK(ctx, e, rec) })
	})
	b.Run("ping", func(b *testing.B) {
		rec := &sdktest.Recorder{}
		timedLoop(b, func() error { return callReq(ctx, e, pingCall, rec) })
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			rec := &sdktest.Recorder{}
			for pb.Next() {
				if err := callOK(ctx, e, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkReactorCallGRPC is BenchmarkReactorCall through the executor's
// plugin boundary (in-memory gRPC, as out of process but without the
// socket).
func BenchmarkReactorCallGRPC(b *testing.B) {
	e := New(WithLogger(quietLogger()), WithCacheDir(cacheDir))
	b.Cleanup(func() { _ = e.Close() })
	c := sdktest.Start(b, e, nil)
	if _, err := c.Load(b.Context(), sdk.LoadRequest{Source: "g", Kind: Kind, Spec: toolFolder(b, StyleReactor, nil)}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rec := &sdktest.Recorder{}
	timedLoop(b, func() error { return callOK(ctx, c, rec) })
}

// BenchmarkLoad is Load of a Go module whose machine code is in the
// compilation cache, as after a restart: read, hash, load from the cache,
// and a trial instantiation (command) or the first instance (reactor).
func BenchmarkLoad(b *testing.B) {
	for _, style := range []string{StyleCommand, StyleReactor} {
		b.Run(style, func(b *testing.B) {
			spec := toolFolder(b, style, nil)
			timedLoop(b, func() error {
				e := New(WithLogger(quietLogger()), WithCacheDir(cacheDir))
				defer e.Close()
				_, err := e.Load(b.Context(), sdk.LoadRequest{Source: "g", Kind: Kind, Spec: spec})
				return err
			})
		})
	}
}
