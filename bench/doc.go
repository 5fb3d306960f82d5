// Package bench holds skillgate's end-to-end benchmarks: the Go
// benchmarks of this package (go test -bench . ./bench) and the harness
// behind docs/PERFORMANCE.md (bench/run.sh, or go run ./bench/cmd/skillbench),
// which measures the gateway as ratios against baselines taken in the same
// run: a bare mcp-go server for tools/list, the upstream called directly for
// tools/call.
//
// bench/upstream is the upstream both use: an mcp-go server with N tools,
// echo among them, over stdio or streamable HTTP.
package bench
