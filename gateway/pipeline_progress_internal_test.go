package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/pipelines"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// progressRecorder is an sdk.Call that keeps the progress it is sent.
type progressRecorder struct {
	nopCall
	mu  sync.Mutex
	got []sdk.Progress
}

func (r *progressRecorder) Progress(p sdk.Progress) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
	return nil
}

func (r *progressRecorder) values() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []float64
	for _, p := range r.got {
		out = append(out, p.Progress)
	}
	return out
}

func mustPipeline(t *testing.T, src string) *pipelines.Pipeline {
	t.Helper()
	ps, err := (&pipelines.Loader{}).Parse(strings.NewReader(src), "p.yaml")
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v", err)
	}
	return ps[0]
}

// A pipeline's progress follows what its steps' tools report of their
// total: 6 of 30 of the only step is 0.2 of 1, not most of it (the audit
// saw 0.857), a for_each counts its items, and the value only increases.
// After the caller canceled, nothing more is sent.
func TestPipelineProgressFraction(t *testing.T) {
	p := mustPipeline(t, "name: slow\nsteps:\n  - {id: wait, tool: x__y}\n")
	rec := &progressRecorder{}
	progress := pipelineProgress(context.Background(), p, rec)
	ev := pipelines.Progress{Pipeline: "slow", Step: "wait", Tool: "x__y", Total: 1}
	start := ev
	start.Event = "started"
	progress(start)
	for n := 1; n <= 6; n++ {
		e := ev
		e.Event, e.StepProgress, e.StepTotal = "progress", float64(n), 30
		progress(e)
	}
	got := rec.values()
	if len(got) != 7 || got[6] != 0.2 {
		t.Errorf("after 6/30 of the only step: %v, want 0.2 last", got)
	}
	// Progress without a total moves a little, and never back.
	e := ev
	e.Event, e.StepProgress = "progress", 1
	progress(e)
	e.StepProgress, e.StepTotal = 3, 30
	progress(e)
	fin := ev
	fin.Event, fin.Done = "finished", 1
	progress(fin)
	got = rec.values()
	if last := got[len(got)-1]; last != 1 {
		t.Errorf("finished: %v, want 1 last", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] || got[i] > 0.2+0.1 && i < len(got)-1 {
			t.Errorf("progress %v: not increasing or jumping ahead at %d", got, i)
			break
		}
	}

	// A for_each step of 4 items, with 2 finished: half of it.
	p = mustPipeline(t, "name: each\nsteps:\n  - {id: a, tool: x__y, for_each: [1, 2, 3, 4]}\n  - {id: b, tool: x__y}\n")
	rec = &progressRecorder{}
	progress = pipelineProgress(context.Background(), p, rec)
	ev = pipelines.Progress{Pipeline: "each", Step: "a", Tool: "x__y", Total: 2}
	start = ev
	start.Event = "started"
	progress(start)
	for i := 1; i <= 2; i++ {
		e := ev
		e.Event, e.Item, e.Items = "finished", i, 4
		progress(e)
	}
	if got := rec.values(); got[len(got)-1] != 0.5 {
		t.Errorf("2 of 4 items of the first of 2 steps: %v, want 0.5 last", got)
	}

	// After the caller canceled, not even the steps' canceled events.
	ctx, cancel := context.WithCancel(context.Background())
	rec = &progressRecorder{}
	progress = pipelineProgress(ctx, p, rec)
	progress(start)
	cancel()
	e = ev
	e.Event, e.Done = "canceled", 1
	progress(e)
	if got := rec.values(); len(got) != 1 {
		t.Errorf("after a cancel: %v, want only the event before", got)
	}
}
