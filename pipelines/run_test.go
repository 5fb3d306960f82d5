package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunChain(t *testing.T) {
	p := mustLoad(t, `
name: chain
inputs:
  type: object
  properties: {who: {type: string}, n: {type: integer, default: 3}}
  required: [who]
steps:
  - id: greet
    tool: everything__echo
    with: {message: "hello ${{ inputs.who }}"}
  - id: add
    tool: everything__get-sum
    with: {a: "${{ inputs.n }}", b: 4}
  - id: shout
    tool: everything__echo
    with: {message: "${{ upper(steps.greet.outputs) }} x${{ steps.add.outputs }}"}
outputs:
  text: ${{ steps.shout.outputs }}
  total: ${{ steps.add.outputs + 1 }}
  status: ${{ steps.add.status }}
`)
	f := newFake(map[string]toolFunc{"everything__echo": echo, "everything__get-sum": sum})
	var r Runner
	var events []Progress
	raw, err := r.Run(context.Background(), p, json.RawMessage(`{"who":"ann"}`), f, func(p Progress) { events = append(events, p) })
	if err != nil {
		t.Fatal(err)
	}
	res := decode(t, raw)
	if res.IsError {
		t.Fatalf("failed: %s", res.text())
	}
	want := map[string]any{"text": "HELLO ANN x7", "total": 8.0, "status": "succeeded"}
	for k, v := range want {
		if res.Structured[k] != v {
			t.Errorf("outputs.%s = %#v, want %#v", k, res.Structured[k], v)
		}
	}
	finished := 0
	for _, e := range events {
		if e.Event == "finished" {
			finished++
		}
		if e.Total != 3 {
			t.Errorf("event %v: total %d", e, e.Total)
		}
	}
	if finished != 3 || events[len(events)-1].Done != 3 {
		t.Errorf("events: %v", events)
	}
	runs := r.Runs()
	if len(runs) != 1 || runs[0].Status != StatusSucceeded || runs[0].Steps[2].Attempts != 1 {
		t.Errorf("runs: %+v", runs)
	}
	if rec, ok := r.Record(runs[0].ID); !ok || rec.ID != runs[0].ID {
		t.Errorf("Record(%s) = %v, %v", runs[0].ID, rec, ok)
	}
}

func TestRunInvalidArguments(t *testing.T) {
	p := mustLoad(t, `
inputs: {type: object, properties: {n: {type: integer}}, required: [n]}
steps: [{id: a, tool: t}]
`)
	var r Runner
	for _, args := range []string{`{}`, `{"n":"x"}`, `{"n":1.5}`, `[1]`} {
		raw, err := r.Run(context.Background(), p, json.RawMessage(args), newFake(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res := decode(t, raw); !res.IsError || !strings.Contains(res.text(), "invalid arguments") {
			t.Errorf("%s: %s", args, raw)
		}
	}
}

// Two steps that do not depend on each other must run at the same time:
// each waits at a barrier for the other, so run one after the other they
// would never finish.
func TestRunParallelBarrier(t *testing.T) {
	p := mustLoad(t, `
steps:
  - {id: left, tool: barrier}
  - {id: right, tool: barrier}
  - {id: after, tool: everything__echo, with: {message: "${{ steps.left.outputs }}+${{ steps.right.outputs }}"}}
outputs: {joined: "${{ steps.after.outputs }}"}
`)
	var arrived sync.WaitGroup
	arrived.Add(2)
	f := newFake(map[string]toolFunc{
		"everything__echo": echo,
		"barrier": func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
			arrived.Done()
			done := make(chan struct{})
			go func() { arrived.Wait(); close(done) }()
			select {
			case <-done:
				return textResult("in"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	})
	// The deadline only keeps a broken scheduler from hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := new(Runner).Run(ctx, p, nil, f, nil)
	if err != nil {
		t.Fatalf("the steps did not meet at the barrier: %v", err)
	}
	if res := decode(t, raw); res.Structured["joined"] != "in+in" {
		t.Errorf("got %s", raw)
	}
}

// for_each items run concurrency at a time: all of them at a barrier of
// that size.
func TestRunForEachConcurrency(t *testing.T) {
	p := mustLoad(t, `
steps:
  - id: fan
    for_each: ${{ 1..6 }}
    concurrency: 3
    tool: barrier
    with: {i: "${{ item * 10 + index }}"}
outputs: {all: "${{ steps.fan.outputs }}", n: "${{ len(steps.fan.outputs) }}"}
`)
	var inFlight, most atomic.Int32
	var gate sync.WaitGroup
	gate.Add(3)
	var once sync.Once
	f := newFake(map[string]toolFunc{"barrier": func(ctx context.Context, a map[string]any) (json.RawMessage, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		i := a["i"].(float64)
		if i < 40 { // the first three items meet at the gate
			gate.Done()
			gate.Wait()
		}
		once.Do(func() {})
		return textResult(strings.Repeat("x", int(i)/10)), nil
	}})
	raw, err := new(Runner).Run(context.Background(), p, nil, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := decode(t, raw)
	if res.IsError {
		t.Fatal(res.text())
	}
	if most.Load() > 3 {
		t.Errorf("%d items in flight, concurrency is 3", most.Load())
	}
	all := res.Structured["all"].([]any)
	if len(all) != 6 || all[0] != "x" || all[5] != "xxxxxx" {
		t.Errorf("outputs %v", all)
	}
}

// Canceling the run mid-fan-out stops every call, and no goroutine of the
// run is left when Run returns.
func TestRunCancelMidFanOut(t *testing.T) {
	p := mustLoad(t, `
steps:
  - id: fan
    for_each: ${{ 1..20 }}
    concurrency: 5
    tool: block
  - {id: other, tool: block}
`)
	before := runtime.NumGoroutine()
	var active sync.WaitGroup
	started := make(chan struct{}, 100)
	f := newFake(map[string]toolFunc{"block": block(&active, started)})
	ctx, cancel := context.WithCancel(context.Background())
	var r Runner
	errc := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, p, nil, f, nil)
		errc <- err
	}()
	for range 6 { // 5 items and the other step
		<-started
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	active.Wait() // returns at once if no call is still running
	if n := f.count("block"); n != 6 {
		t.Errorf("%d calls made, want 6: no item may start after the cancel", n)
	}
	// Goroutines of the test itself have ended too; allow the runtime a moment to reap.
	for i := 0; runtime.NumGoroutine() > before && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left running, %d before", n, before)
	}
	if rec := r.Runs()[0]; rec.Status != StatusCanceled {
		t.Errorf("record status %s", rec.Status)
	}
}

func flaky(fails int) toolFunc {
	var n atomic.Int32
	return func(context.Context, map[string]any) (json.RawMessage, error) {
		if int(n.Add(1)) <= fails {
			if n.Load()%2 == 0 {
				return json.RawMessage(`{"content":[{"type":"text","text":"busy"}],"isError":true}`), nil
			}
			return nil, errFlaky
		}
		return textResult("ok"), nil
	}
}

func TestRunRetry(t *testing.T) {
	for _, tc := range []struct {
		fails, max int
		ok         bool
	}{{0, 0, true}, {2, 2, true}, {3, 2, false}, {1, 0, false}} {
		p := mustLoad(t, `
steps:
  - id: s
    tool: flaky
    retry: {max: `+itoa(tc.max)+`, backoff: 1ms}
`)
		f := newFake(map[string]toolFunc{"flaky": flaky(tc.fails)})
		var r Runner
		var retries int
		raw, err := r.Run(context.Background(), p, nil, f, func(p Progress) {
			if p.Event == "retrying" {
				retries++
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		res := decode(t, raw)
		if res.IsError == tc.ok {
			t.Errorf("fails %d max %d: %s", tc.fails, tc.max, raw)
		}
		wantCalls := min(tc.fails, tc.max) + 1
		if got := f.count("flaky"); got != wantCalls || r.Runs()[0].Steps[0].Attempts != wantCalls || retries != wantCalls-1 {
			t.Errorf("fails %d max %d: %d calls, %d retries, want %d calls", tc.fails, tc.max, got, retries, wantCalls)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestRunTimeouts(t *testing.T) {
	var active sync.WaitGroup
	started := make(chan struct{}, 10)
	tools := map[string]toolFunc{"block": block(&active, started), "everything__echo": echo}
	t.Run("step", func(t *testing.T) {
		p := mustLoad(t, `
steps:
  - {id: slow, tool: block, timeout: 20ms, retry: {max: 1}}
`)
		raw, err := new(Runner).Run(context.Background(), p, nil, newFake(tools), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res := decode(t, raw); !res.IsError || !strings.Contains(res.text(), "timed out after 20ms (after 2 attempts)") {
			t.Errorf("got %s", raw)
		}
	})
	t.Run("pipeline", func(t *testing.T) {
		p := mustLoad(t, `
timeout: 20ms
steps:
  - {id: slow, tool: block}
`)
		raw, err := new(Runner).Run(context.Background(), p, nil, newFake(tools), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res := decode(t, raw); !res.IsError || !strings.Contains(res.text(), "timed out after 20ms") {
			t.Errorf("got %s", raw)
		}
	})
	active.Wait()
}

func TestRunOnError(t *testing.T) {
	tools := map[string]toolFunc{
		"everything__echo": echo,
		"broken": func(context.Context, map[string]any) (json.RawMessage, error) {
			return json.RawMessage(`{"content":[{"type":"text","text":"disk on fire"}],"isError":true}`), nil
		},
	}
	cases := []struct {
		name, src, want string
		isError         bool
	}{
		{"fail", `
steps:
  - {id: a, tool: broken}
  - {id: b, tool: everything__echo, with: {message: "${{ steps.a.status }}"}}
`, "step a (broken) failed: disk on fire", true},
		{"continue", `
steps:
  - {id: a, tool: broken, on_error: continue}
  - {id: b, tool: everything__echo, with: {message: "${{ steps.a.status }}: ${{ steps.a.error }}"}}
outputs: {b: "${{ steps.b.outputs }}"}
`, "failed: disk on fire", false},
		{"fallback", `
steps:
  - {id: a, tool: broken, on_error: rescue}
  - {id: rescue, tool: everything__echo, with: {message: "rescued from ${{ steps.a.error }}"}}
  - {id: b, tool: everything__echo, with: {message: "${{ steps.a.status }}: ${{ steps.a.outputs }}"}}
outputs: {b: "${{ steps.b.outputs }}"}
`, "recovered: rescued from disk on fire", false},
		{"fallback fails", `
steps:
  - {id: a, tool: broken, on_error: rescue}
  - {id: rescue, tool: broken}
`, "step rescue (broken) failed: as fallback for a (which failed: disk on fire): disk on fire", true},
		{"skipped", `
steps:
  - {id: a, tool: everything__echo, if: "${{ 1 > 2 }}", with: {message: hi}}
  - {id: b, tool: everything__echo, with: {message: "${{ steps.a.status }} ${{ steps.a.outputs ?? 'none' }}"}}
outputs: {b: "${{ steps.b.outputs }}"}
`, "skipped none", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.src)
			raw, err := new(Runner).Run(context.Background(), p, nil, newFake(tools), nil)
			if err != nil {
				t.Fatal(err)
			}
			res := decode(t, raw)
			got := res.text()
			if !tc.isError {
				got, _ = res.Structured["b"].(string)
			}
			if res.IsError != tc.isError || !strings.Contains(got, tc.want) {
				t.Errorf("got %s, want %q", raw, tc.want)
			}
		})
	}
}

// A pipeline that calls itself through the gateway is refused with the
// whole chain in the error; so is nesting deeper than MaxDepth. (Loaded
// in one batch, the two would be held back; loaded apart, as a pipeline
// and a tool of another source, only the guard sees the loop.)
func TestRunRecursionGuard(t *testing.T) {
	r := &Runner{}
	byTool := map[string]*Pipeline{}
	for _, src := range []string{"name: outer\nsteps: [{id: a, tool: pipelines__inner}]\n", "name: inner\nsteps: [{id: b, tool: pipelines__outer}]\n"} {
		p := mustLoad(t, src)
		byTool[p.ToolName] = p
	}
	var gw gatewayCaller
	gw = func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		return r.Run(ctx, byTool[name], args, gw, nil)
	}
	raw, err := r.Run(context.Background(), byTool["pipelines__outer"], nil, gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := decode(t, raw)
	if !res.IsError || !strings.Contains(res.text(), "pipelines__outer -> pipelines__inner -> pipelines__outer") {
		t.Errorf("got %s", raw)
	}

	_, err = r.Run(WithCallChain(context.Background(), []string{"a", "b"}), byTool["pipelines__outer"], nil, gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	deep := &Runner{MaxDepth: 2}
	_, err = deep.Run(WithCallChain(context.Background(), []string{"a", "b"}), byTool["pipelines__outer"], nil, gw, nil)
	var ce *ChainError
	if !errors.As(err, &ce) || !errors.Is(err, ErrTooDeep) {
		t.Errorf("depth 3 with MaxDepth 2: %v", err)
	}
}

type gatewayCaller func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

func (g gatewayCaller) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return g(ctx, name, args)
}

func TestRunKeepsLastRuns(t *testing.T) {
	p := mustLoad(t, `steps: [{id: a, tool: everything__echo, with: {message: hi}}]`)
	r := &Runner{Keep: 3}
	f := newFake(map[string]toolFunc{"everything__echo": echo})
	var ids []string
	for range 5 {
		if _, err := r.Run(context.Background(), p, nil, f, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Runs()[0].ID)
	}
	runs := r.Runs()
	if len(runs) != 3 || runs[0].ID != ids[4] || runs[2].ID != ids[2] {
		t.Errorf("kept %v of %v", runs, ids)
	}
	if _, ok := r.Record(ids[0]); ok {
		t.Error("the oldest run is still kept")
	}
}

func TestStepOutput(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, `"hi"`},
		{`{"content":[{"type":"text","text":"{\"a\":1}"}]}`, `{"a":1}`},
		{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"b":2}}`, `{"b":2}`},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, `[{"data":"AA==","mimeType":"image/png","type":"image"}]`},
		{`{"content":[]}`, `""`},
	} {
		v, err := stepOutput(json.RawMessage(tc.raw))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(v); string(b) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.raw, b, tc.want)
		}
	}
}

// What a step's tool reports while it runs reaches the run's progress as
// progress events of that step (and item), between its started and
// finished; nothing does once Run has returned.
func TestStepProgress(t *testing.T) {
	p := mustLoad(t, `steps:
  - id: slow
    for_each: [a, b]
    concurrency: 1
    tool: x__slow
    with: {m: "${{ item }}"}
`)
	var late func(float64, float64, string)
	f := newFake(map[string]toolFunc{"x__slow": func(ctx context.Context, a map[string]any) (json.RawMessage, error) {
		report := StepProgress(ctx)
		report(1, 2, "half of "+a["m"].(string))
		report(2, 0, "")
		late = report
		return textResult("done"), nil
	}})
	var got []string
	raw, err := (&Runner{}).Run(context.Background(), p, nil, f, func(pr Progress) { got = append(got, pr.String()) })
	if err != nil || decode(t, raw).IsError {
		t.Fatalf("run: %s %v", raw, err)
	}
	late(3, 3, "after the run")
	want := []string{
		"[0/1] slow started",
		"[0/1] slow progress 1/2 (item 1 of 2): half of a",
		"[0/1] slow progress 2 (item 1 of 2)",
		"[0/1] slow finished (item 1 of 2)",
		"[0/1] slow progress 1/2 (item 2 of 2): half of b",
		"[0/1] slow progress 2 (item 2 of 2)",
		"[0/1] slow finished (item 2 of 2)",
		"[1/1] slow finished",
	}
	if !slices.Equal(got, want) {
		t.Errorf("progress\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Outside a run, reporting does nothing.
	StepProgress(context.Background())(1, 1, "nobody listens")
}
