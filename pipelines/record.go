package pipelines

import (
	"encoding/json"
	"slices"
	"time"
)

// Record is what a Runner remembers of one run.
type Record struct {
	// ID identifies the run.
	ID string `json:"id"`
	// Pipeline is the pipeline's name.
	Pipeline string `json:"pipeline"`
	// Started is when the run began.
	Started time.Time `json:"started"`
	// Duration is how long it took; zero while it runs. JSON has it as
	// duration_ms, in milliseconds.
	Duration time.Duration `json:"-"`
	// Status is running, succeeded, failed or canceled.
	Status string `json:"status"`
	// Error says why a run failed.
	Error string `json:"error,omitempty"`
	// Steps are the steps in file order.
	Steps []StepRecord `json:"steps"`
}

// StepRecord is what a Runner remembers of one step of a run.
type StepRecord struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Status string `json:"status"`
	// Started is when the step's first tool call began, once it had a
	// slot of the run's concurrency; zero until then, and for a step that
	// called nothing (skipped).
	Started time.Time `json:"started,omitzero"`
	// Duration is how long the step took from Started; JSON has it as
	// duration_ms.
	Duration time.Duration `json:"-"`
	// Queued is how long the step waited for its first slot, after its
	// dependencies had settled; JSON has it as queued_ms.
	Queued time.Duration `json:"-"`
	// Attempts is how many times the step's call was tried: 1, or more
	// when it was retried. For a for_each, it is the most any item took
	// (Items counts the calls).
	Attempts int `json:"attempts"`
	// Calls counts the tool calls made, retries and for_each items
	// included, the ones still running too.
	Calls int `json:"calls"`
	// Items and ItemsFailed count a for_each step's items.
	Items       int `json:"items,omitempty"`
	ItemsFailed int `json:"items_failed,omitempty"`
	// ItemsCanceled counts the items stopped by a cancellation: the
	// client's, or another item's or step's failure.
	ItemsCanceled int    `json:"items_canceled,omitempty"`
	Error         string `json:"error,omitempty"`
}

// MarshalJSON writes the record with its duration as duration_ms.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	return json.Marshal(struct {
		plain
		DurationMS float64 `json:"duration_ms"`
	}{plain(r), millis(r.Duration)})
}

// MarshalJSON writes the step's record with its duration as duration_ms
// and its time queued as queued_ms.
func (s StepRecord) MarshalJSON() ([]byte, error) {
	type plain StepRecord
	return json.Marshal(struct {
		plain
		DurationMS float64 `json:"duration_ms"`
		QueuedMS   float64 `json:"queued_ms,omitempty"`
	}{plain(s), millis(s.Duration), millis(s.Queued)})
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r Record) clone() Record {
	r.Steps = slices.Clone(r.Steps)
	return r
}

// Runs returns the records of the most recent runs, newest first, running
// ones included.
func (r *Runner) Runs() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Record, 0, len(r.ring))
	for i := len(r.ring) - 1; i >= 0; i-- {
		out = append(out, r.ring[i].clone())
	}
	return out
}

// Record returns the record of run id, if it is still kept.
func (r *Runner) Record(id string) (Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.ring {
		if rec.ID == id {
			return rec.clone(), true
		}
	}
	return Record{}, false
}

// keep adds rec to the ring, dropping the oldest beyond the limit.
func (r *Runner) keep(rec *Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.Keep
	if n <= 0 {
		n = 100
	}
	r.ring = append(r.ring, rec)
	if len(r.ring) > n {
		copy(r.ring, r.ring[len(r.ring)-n:])
		clear(r.ring[n:])
		r.ring = r.ring[:n]
	}
}

// update changes rec under the runner's lock.
func (r *Runner) update(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
}
