package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

// for_each items stopped by a cancellation from outside the step (the
// client cancelled the run, or another step failed) count as canceled, not
// failed: no item has a failed event, the record counts them canceled and
// the step's error says they were canceled.
func TestForEachItemsCanceledFromOutside(t *testing.T) {
	for _, tc := range []struct {
		name, src     string
		clientCancels bool
	}{
		{"client", "steps:\n  - {id: a, tool: wait, for_each: [1, 2, 3], with: {i: \"${{ item }}\"}}\n", true},
		{"other step", "steps:\n  - {id: a, tool: wait, for_each: [1, 2, 3], with: {i: \"${{ item }}\"}}\n  - {id: b, tool: fail}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.src)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var started sync.WaitGroup
			started.Add(3)
			allStarted := make(chan struct{})
			go func() { started.Wait(); close(allStarted) }()
			f := newFake(map[string]toolFunc{
				"wait": func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
					started.Done()
					<-ctx.Done()
					return nil, ctx.Err()
				},
				"fail": func(context.Context, map[string]any) (json.RawMessage, error) {
					<-allStarted
					return nil, errors.New("boom")
				},
			})
			if tc.clientCancels {
				go func() { <-allStarted; cancel() }()
			}
			var mu sync.Mutex
			var failedEvents []Progress
			r := new(Runner)
			raw, err := r.Run(ctx, p, nil, f, func(pr Progress) {
				if pr.Event == "failed" && pr.Step == "a" {
					mu.Lock()
					failedEvents = append(failedEvents, pr)
					mu.Unlock()
				}
			})
			if err != nil && !tc.clientCancels {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(failedEvents) > 0 {
				t.Errorf("failed events for step a: %+v; its items were canceled", failedEvents)
			}
			s := r.Runs()[0].Steps[0]
			if s.Status != StatusCanceled || s.ItemsFailed != 0 || s.ItemsCanceled != 3 {
				t.Errorf("step a: status %s, items failed %d, canceled %d; want canceled, 0 and 3", s.Status, s.ItemsFailed, s.ItemsCanceled)
			}
			if strings.Contains(s.Error, "failed") {
				t.Errorf("step a's error %q calls canceled items failed", s.Error)
			}
			if !tc.clientCancels {
				if got := decode(t, raw).text(); !strings.Contains(got, "boom") || strings.Contains(got, "items failed") {
					t.Errorf("result %q; want b's failure, and a's items not failed", got)
				}
			}
		})
	}
}
