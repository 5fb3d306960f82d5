package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// BenchmarkCall measures one call through the SDK's transport at each
// protocol version, host and executor in this process: 1 opens a gRPC
// stream per call, 2 carries every call on one Calls stream, 3 on the
// executor's side channel (a local socket; Linux only). The executor
// echoes its params, so what is measured is the link.
//
//	go test -run '^$' -bench Call -benchmem ./...
func BenchmarkCall(b *testing.B) {
	params := json.RawMessage(`{"name":"echo","arguments":{"message":"hello"}}`)
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		if v >= 3 && runtime.GOOS != "linux" {
			continue
		}
		c := start(b, &echo{}, nil, v)
		req := sdk.CallRequest{Source: "a", Method: "echo", Params: params}
		b.Run(fmt.Sprintf("protocol%d/sequential", v), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("protocol%d/parallel", v), func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // 16 callers on 2 CPUs, as the harness's load
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Call(context.Background(), req, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
