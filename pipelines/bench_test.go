package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// echoRaw is the cheapest fake tool: a fixed text result.
type echoRaw struct{}

func (echoRaw) CallTool(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"Echo: hi"}]}`), nil
}

// BenchmarkDirectCall is the baseline: the fake tool called directly.
func BenchmarkDirectCall(b *testing.B) {
	ctx := context.Background()
	args := json.RawMessage(`{"message":"hi"}`)
	for b.Loop() {
		if _, err := (echoRaw{}).CallTool(ctx, "everything__echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOneStep is a one-step pipeline with one binding: subtract
// BenchmarkDirectCall for the per-step overhead (target <= 20 us).
func BenchmarkOneStep(b *testing.B) {
	p := mustLoad(b, `
inputs: {type: object, properties: {m: {type: string}}}
steps:
  - {id: a, tool: everything__echo, with: {message: "${{ inputs.m }}"}}
outputs: {out: "${{ steps.a.outputs }}"}
`)
	benchRun(b, p, `{"m":"hi"}`, 1)
}

// BenchmarkSequential100 is a chain of 100 echo steps, each reading the
// one before; ns/op divided by 100 is the per-step cost.
func BenchmarkSequential100(b *testing.B) {
	var src strings.Builder
	src.WriteString("steps:\n  - {id: s0, tool: everything__echo, with: {message: hi}}\n")
	for i := 1; i < 100; i++ {
		fmt.Fprintf(&src, "  - {id: s%d, tool: everything__echo, with: {message: \"${{ steps.s%d.outputs }}\"}}\n", i, i-1)
	}
	src.WriteString("outputs: {last: \"${{ steps.s99.outputs }}\"}\n")
	benchRun(b, mustLoad(b, src.String()), `{}`, 100)
}

// BenchmarkForEach100 fans one step out to 100 items, 8 at a time.
func BenchmarkForEach100(b *testing.B) {
	p := mustLoad(b, `
steps:
  - id: fan
    for_each: ${{ 1..100 }}
    concurrency: 8
    tool: everything__echo
    with: {message: "item ${{ item }}"}
outputs: {n: "${{ len(steps.fan.outputs) }}"}
`)
	benchRun(b, p, `{}`, 100)
}

func benchRun(b *testing.B, p *Pipeline, args string, steps int) {
	r := &Runner{Keep: 10}
	ctx := context.Background()
	raw := json.RawMessage(args)
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Run(ctx, p, raw, echoRaw{}, nil)
		if err != nil || strings.Contains(string(res), `"isError"`) {
			b.Fatalf("%s %v", res, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps)/1000, "us/step")
}

// BenchmarkCompile is the load-time cost of one expression.
func BenchmarkCompile(b *testing.B) {
	e := newEngine(Limits{})
	env := newTypeEnv(envTypes())
	for b.Loop() {
		if _, probs := e.compile(`join(map(filter(inputs.xs, # > 30), string(#)), ", ")`, env, nil); len(probs) > 0 {
			b.Fatal(probs)
		}
	}
}

// BenchmarkLoad compiles pipelines of 250 to 2000 steps, each step with
// one expression, either independent or each reading the step before:
// load time must grow linearly with the steps (compare ns/step across
// sizes). A load used to build the type of every step for every step.
func BenchmarkLoad(b *testing.B) {
	for _, shape := range []string{"independent", "chain"} {
		for _, n := range []int{250, 500, 1000, 2000} {
			src := bigPipeline(n, shape == "chain")
			b.Run(fmt.Sprintf("%s/steps=%d", shape, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := (&Loader{}).Parse(strings.NewReader(src), "big.yaml"); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/step")
			})
		}
	}
}

// bigPipeline is a pipeline of n echo steps; with chain, each also reads
// the status of the step before it.
func bigPipeline(n int, chain bool) string {
	var src strings.Builder
	src.WriteString("steps:\n")
	for i := range n {
		ref := ""
		if chain && i > 0 {
			ref = fmt.Sprintf(" ${{ steps.s%d.status }}", i-1)
		}
		fmt.Fprintf(&src, "  - {id: s%d, tool: everything__echo, with: {message: \"${{ inputs }} %d%s\"}}\n", i, i, ref)
	}
	return src.String()
}
