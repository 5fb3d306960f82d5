package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// BenchmarkCallStdio measures tools/call through the executor in process to
// a stdio upstream (testdata/faultserver's echo), sequential and parallel.
func BenchmarkCallStdio(b *testing.B) {
	e := New()
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "f", Kind: Kind, Spec: mustJSON(fault())}); err != nil {
		b.Fatal(err)
	}
	req := sdk.CallRequest{Source: "f", Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hello"}}`)}
	b.Run("sequential", func(b *testing.B) {
		rec := &sdktest.Recorder{}
		for b.Loop() {
			if _, err := e.Call(ctx, req, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			rec := &sdktest.Recorder{}
			for pb.Next() {
				if _, err := e.Call(ctx, req, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
