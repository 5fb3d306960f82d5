package pipelines

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Caller calls tools for a Runner; the gateway implements it over its
// router. CallTool receives the tool's name and its arguments as a JSON
// object and returns an MCP CallToolResult. A result with isError counts
// as a failure of the step, as does an error. The Runner calls CallTool
// from several goroutines at once, with a ctx carrying the call chain
// (see CallChain); CallTool must return soon after ctx is done.
type Caller interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// Progress is one event of a run, reported as it happens.
type Progress struct {
	RunID    string
	Pipeline string
	// Step and Tool are the step the event is about.
	Step string
	Tool string
	// Event is started, progress, retrying, finished, failed, skipped or
	// canceled; or waiting, about no step, while Runner.Prepare waits. A
	// progress event passes on what the step's tool reported while it ran
	// (see StepProgress).
	Event string
	// Item and Items are the for_each item (from 1) and count, when the
	// event is about one item; zero otherwise.
	Item, Items int
	// Attempt is the attempt that failed, for retrying.
	Attempt int
	// Done is how many steps have finished, of Total.
	Done, Total int
	// Err says why, for failed and retrying.
	Err string
	// StepProgress and StepTotal are the progress the step's tool reported
	// and its total (0 when the tool did not say), for progress.
	StepProgress, StepTotal float64
	// Message is the tool's message, for progress.
	Message string
}

// String is a one-line message for a progress notification.
func (p Progress) String() string {
	s := fmt.Sprintf("[%d/%d] %s %s", p.Done, p.Total, p.Step, p.Event)
	if p.Step == "" {
		s = fmt.Sprintf("[%d/%d] %s", p.Done, p.Total, p.Event)
	}
	if p.Event == "progress" {
		// At most two decimals: a nested pipeline's progress is a fraction
		// such as 2/3.
		num := func(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }
		s += " " + num(p.StepProgress)
		if p.StepTotal > 0 {
			s += "/" + num(p.StepTotal)
		}
	}
	if p.Items > 0 {
		s += fmt.Sprintf(" (item %d of %d)", p.Item, p.Items)
	}
	if p.Err != "" {
		s += ": " + p.Err
	}
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}

type stepProgressKey struct{}

// StepProgress returns the function through which a Caller passes on what
// the tool of a step reports while it runs (an MCP progress notification:
// its progress, its total or 0, and its message). The Runner sets it on
// the ctx of each CallTool and reports each as a progress event of the
// step; on any other ctx the function does nothing. It may be called from
// any goroutine until CallTool returns.
func StepProgress(ctx context.Context) func(progress, total float64, message string) {
	if f, ok := ctx.Value(stepProgressKey{}).(func(float64, float64, string)); ok {
		return f
	}
	return func(float64, float64, string) {}
}

// Runner runs pipelines and remembers the last runs. Its zero value is
// ready to use; set its fields before the first Run. Run may be called
// concurrently.
type Runner struct {
	// MaxParallel bounds the tool calls of one run in flight at once,
	// unless the pipeline sets concurrency (default 8).
	MaxParallel int
	// MaxDepth bounds nested tool calls (default DefaultMaxDepth).
	MaxDepth int
	// Keep is how many runs Runs remembers (default 100).
	Keep int
	// Prepare, when set, is called once per run, after the arguments are
	// checked and before any step, with the run's ctx: the gateway starts
	// the services the pipeline requires here. What it passes to wait is
	// reported as a waiting event of the run (with no step), for the
	// caller to see why nothing happens yet. An error fails the run, which
	// is recorded with it, as a step's would be.
	Prepare func(ctx context.Context, p *Pipeline, wait func(message string)) error

	mu   sync.Mutex
	ring []*Record
}

// resultLimit bounds the JSON of a pipeline's result.
const resultLimit = 16 << 20

// stepState is one step's outcome. Written only by the step's goroutine
// before done is closed; read by others only after.
type stepState struct {
	done    chan struct{}
	status  string
	outputs any
	err     error
	view    map[string]any // what steps.<id> shows
	ready   time.Time      // when the step began, before waiting for a slot
}

type run struct {
	r       *Runner
	p       *Pipeline
	caller  Caller
	rec     *Record
	inputs  any
	states  []*stepState
	pending []atomic.Int32 // per step: dependencies not settled yet
	wg      sync.WaitGroup
	sem     chan struct{}
	cancel  context.CancelCauseFunc
	progMu  sync.Mutex
	prog    func(Progress)
	ended   bool // set when Run returns: no more progress after
	done    int
	total   int
	maxDeep int
}

// failure is the cause a run is canceled with when a step fails.
type failure struct {
	step *Step
	err  error
}

func (f *failure) Error() string {
	return fmt.Sprintf("step %s (%s) failed: %v", f.step.ID, f.step.Tool, f.err)
}

var errPipelineTimeout = errors.New("pipeline timed out")

// Run runs p with args (a JSON object, or empty) and returns its MCP
// CallToolResult: the pipeline's outputs as structuredContent, or isError
// with the failing step and why. progress, when non-nil, receives every
// event, one at a time. Run returns an error only when it did not run p:
// ctx was done (the error is ctx's), or the call-chain guard refused
// (a *ChainError). Every step has stopped when Run returns.
func (r *Runner) Run(ctx context.Context, p *Pipeline, args json.RawMessage, caller Caller, progress func(Progress)) (json.RawMessage, error) {
	chain := CallChain(ctx)
	if len(chain) == 0 || chain[len(chain)-1] != p.ToolName {
		var err error
		if ctx, err = Enter(ctx, p.ToolName, r.MaxDepth); err != nil {
			return nil, err
		}
	}
	rn := &run{r: r, p: p, caller: caller, prog: progress, maxDeep: r.MaxDepth}
	defer func() {
		// A tool may report progress after its call returned; none of it
		// reaches progress once Run has.
		rn.progMu.Lock()
		rn.ended = true
		rn.progMu.Unlock()
	}()
	rn.rec = &Record{ID: newRunID(), Pipeline: p.Name, Started: time.Now(), Status: StatusRunning}
	for _, s := range p.Steps {
		if !s.Fallback {
			rn.total++
		}
		rn.rec.Steps = append(rn.rec.Steps, StepRecord{ID: s.ID, Tool: s.Tool, Status: StatusPending})
	}
	r.keep(rn.rec)

	in, err := p.arguments(args)
	if err != nil {
		return rn.end(err), nil
	}
	rn.inputs = in

	if r.Prepare != nil {
		wait := func(msg string) { rn.emit(Progress{Event: "waiting", Message: msg}, false) }
		if err := r.Prepare(ctx, p, wait); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				rn.finish(StatusCanceled, cerr.Error())
				return nil, cerr
			}
			return rn.end(err), nil
		}
	}

	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.Timeout, errPipelineTimeout)
		defer cancel()
	}
	parent := ctx
	ctx, rn.cancel = context.WithCancelCause(ctx)
	defer rn.cancel(nil)

	n := p.Concurrency
	if n <= 0 {
		n = r.MaxParallel
	}
	if n <= 0 {
		n = 8
	}
	rn.sem = make(chan struct{}, n)
	rn.states = make([]*stepState, len(p.Steps))
	rn.pending = make([]atomic.Int32, len(p.Steps))
	for i, s := range p.Steps {
		rn.states[i] = &stepState{done: make(chan struct{}), status: StatusPending}
		rn.pending[i].Store(int32(len(s.deps)))
	}
	// A step starts once its dependencies have settled: the steps without
	// any start now, each on its own goroutine, and the goroutine that
	// settles a step's last dependency runs it (see start).
	for _, s := range p.Steps {
		if !s.Fallback && len(s.deps) == 0 {
			rn.wg.Add(1)
			go rn.start(ctx, s)
		}
	}
	rn.wg.Wait()

	if err := parent.Err(); err != nil && context.Cause(parent) != errPipelineTimeout {
		rn.finish(StatusCanceled, err.Error())
		return nil, err
	}
	cause := context.Cause(ctx)
	var f *failure
	switch {
	case errors.As(cause, &f):
		return rn.end(f), nil
	case cause == errPipelineTimeout || context.Cause(parent) == errPipelineTimeout:
		msg := fmt.Sprintf("the pipeline timed out after %s", p.Timeout)
		if running := rn.stopped(); len(running) > 0 {
			msg += " while " + strings.Join(running, " and ") + " ran; raise timeout, or the step's own"
		}
		return rn.end(errors.New(msg)), nil
	}
	return rn.outputs(ctx)
}

// stopped names the steps that were stopped while they ran (canceled,
// with the error that stopped them), as "step b (x__y)".
func (rn *run) stopped() []string {
	var out []string
	rn.r.update(func() {
		for _, sr := range rn.rec.Steps {
			if sr.Status == StatusCanceled && sr.Error != "" {
				out = append(out, fmt.Sprintf("step %s (%s)", sr.ID, sr.Tool))
			}
		}
	})
	return out
}

// unknownArgument refuses an argument the inputs schema's properties do
// not name, unless its additionalProperties lets other names in: it would be
// dropped without a word, and is most often a typo.
func (p *Pipeline) unknownArgument(in any) error {
	args, ok := in.(map[string]any)
	if !ok || p.inputs == nil {
		return nil
	}
	if ap, has := p.inputs["additionalProperties"]; has && ap != false {
		return nil
	}
	props, declared := p.inputs["properties"].(map[string]any)
	if !declared {
		// No properties: any name is taken (and reading one warns at
		// load that it is not declared).
		return nil
	}
	known := sortedKeys(props)
	for _, name := range sortedKeys(args) {
		if _, ok := props[name]; ok {
			continue
		}
		msg := fmt.Sprintf("pipeline %s has no input %q", p.Name, name)
		switch near, ok := closest(name, known); {
		case ok:
			msg += fmt.Sprintf("; did you mean %q?", near)
		case len(known) == 0:
			msg += "; it takes no arguments"
		default:
			msg += "; its inputs are " + strings.Join(known, ", ")
		}
		return fmt.Errorf("%w: %s", ErrInvalidArguments, msg)
	}
	return nil
}

// arguments decodes args, fills in the schema's defaults, turns whole
// numbers into ints where it says integer, and validates the result
// against the inputs schema.
func (p *Pipeline) arguments(args json.RawMessage) (any, error) {
	var in any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, fmt.Errorf("%w: not a JSON object: %v", ErrInvalidArguments, err)
		}
	}
	if err := p.unknownArgument(in); err != nil {
		return nil, err
	}
	in, err := coerce(p.inputs, in, "")
	if err != nil {
		return nil, err
	}
	if err := checkArguments(p.schema, in); err != nil {
		return nil, err
	}
	return in, nil
}

func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// end records a failed run and returns its isError result.
func (rn *run) end(err error) json.RawMessage {
	msg := fmt.Sprintf("pipeline %s failed: %v (run %s)", rn.p.Name, err, rn.rec.ID)
	rn.finish(StatusFailed, err.Error())
	return errorResult(msg)
}

func (rn *run) finish(status, msg string) {
	rn.r.update(func() {
		rn.rec.Status, rn.rec.Error = status, msg
		rn.rec.Duration = time.Since(rn.rec.Started)
		// What never ran (a fallback not needed, or every step of a run
		// refused its arguments) did not run: it is not waiting any more.
		for i := range rn.rec.Steps {
			if rn.rec.Steps[i].Status == StatusPending {
				rn.rec.Steps[i].Status = StatusSkipped
			}
		}
	})
}

// outputs evaluates the pipeline's outputs after every step finished.
func (rn *run) outputs(ctx context.Context) (json.RawMessage, error) {
	p := rn.p
	var v any
	if p.outputs == nil {
		m := map[string]any{}
		for _, s := range p.sinks {
			m[s.ID] = rn.states[s.index].outputs
		}
		v = m
	} else {
		all := make(map[string]any, len(p.Steps))
		for i, s := range p.Steps {
			if !s.Fallback {
				all[s.ID] = rn.states[i].view
			}
		}
		var err error
		v, err = p.outputs.eval(ctx, p.eng, map[string]any{"inputs": rn.inputs, "env": p.env, "steps": all})
		if err != nil {
			return rn.end(place("outputs", err)), nil
		}
	}
	res, err := okResult(v, resultLimit)
	if err != nil {
		return rn.end(fmt.Errorf("outputs: %w", err)), nil
	}
	rn.finish(StatusSucceeded, "")
	return res, nil
}

func (rn *run) emit(ev Progress, finished bool) {
	if rn.prog == nil && !finished {
		return
	}
	rn.progMu.Lock()
	defer rn.progMu.Unlock()
	if finished {
		rn.done++
	}
	if rn.prog == nil || rn.ended {
		return
	}
	ev.RunID, ev.Pipeline, ev.Done, ev.Total = rn.rec.ID, rn.p.Name, rn.done, rn.total
	rn.prog(ev)
}

func (rn *run) recStep(s *Step, f func(*StepRecord)) {
	rn.r.update(func() { f(&rn.rec.Steps[s.index]) })
}

// settle records s's outcome, makes it visible to dependents and reports it.
func (rn *run) settle(s *Step, status string, out any, err error) {
	st := rn.states[s.index]
	st.status, st.outputs, st.err = status, out, err
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	st.view = map[string]any{"outputs": out, "status": status, "error": msg}
	rn.recStep(s, func(sr *StepRecord) {
		sr.Status, sr.Error = status, msg
		if !sr.Started.IsZero() {
			sr.Duration = time.Since(sr.Started)
		}
	})
	ev := map[string]string{StatusSucceeded: "finished", StatusRecovered: "finished", StatusFailed: "failed",
		StatusSkipped: "skipped", StatusCanceled: "canceled"}[status]
	rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: ev, Err: msg}, true)
}

// start runs s and then, on the same goroutine, the first of its
// dependents that s was the last dependency of; the others get goroutines
// of their own. Continuing on the same goroutine keeps its grown stack
// (the expression VM needs a deep one) and saves a goroutine per step of
// a chain.
func (rn *run) start(ctx context.Context, s *Step) {
	defer rn.wg.Done()
	for s != nil {
		rn.runStep(ctx, s)
		var next *Step
		for _, d := range rn.p.dependents()[s.index] {
			if rn.pending[d.index].Add(-1) != 0 {
				continue
			}
			if next == nil {
				next = d
				continue
			}
			rn.wg.Add(1)
			go rn.start(ctx, d)
		}
		s = next
	}
}

// runStep runs s, whose dependencies have all settled.
func (rn *run) runStep(ctx context.Context, s *Step) {
	st := rn.states[s.index]
	defer close(st.done)
	if ctx.Err() != nil {
		rn.settle(s, StatusCanceled, nil, nil)
		return
	}
	steps := make(map[string]any, len(s.deps))
	for _, d := range s.deps {
		steps[d.ID] = rn.states[d.index].view
	}
	out, status, err := rn.exec(ctx, s, steps)
	if err == nil {
		rn.settle(s, status, out, nil)
		return
	}
	if ctx.Err() != nil {
		rn.settle(s, StatusCanceled, nil, err)
		return
	}
	switch {
	case s.OnError == "continue":
		rn.settle(s, StatusFailed, out, err) // a for_each keeps the items that worked
	case s.fallback != nil:
		fb := s.fallback
		fbSteps := make(map[string]any, len(fb.deps))
		for _, d := range fb.deps {
			if d == s {
				fbSteps[d.ID] = map[string]any{"outputs": nil, "status": StatusFailed, "error": err.Error()}
			} else {
				fbSteps[d.ID] = rn.states[d.index].view
			}
		}
		rn.recStep(fb, func(sr *StepRecord) { sr.Status = StatusRunning })
		fout, fstatus, ferr := rn.exec(ctx, fb, fbSteps)
		rn.recStep(fb, func(sr *StepRecord) {
			sr.Status = fstatus
			if ferr != nil {
				sr.Status, sr.Error = StatusFailed, ferr.Error()
			}
			if !sr.Started.IsZero() {
				sr.Duration = time.Since(sr.Started)
			}
		})
		switch {
		case ferr == nil && fstatus == StatusSucceeded:
			rn.settle(s, StatusRecovered, fout, err)
		case ferr != nil && fb.OnError == "continue":
			rn.settle(s, StatusFailed, nil, err)
		case ferr != nil:
			rn.settle(s, StatusFailed, nil, err)
			rn.cancel(&failure{step: fb, err: fmt.Errorf("as fallback for %s (which failed: %v): %w", s.ID, err, ferr)})
		default: // the fallback's if said no: nothing recovered
			rn.settle(s, StatusFailed, nil, err)
			rn.cancel(&failure{step: s, err: err})
		}
	default:
		rn.settle(s, StatusFailed, nil, err)
		rn.cancel(&failure{step: s, err: err})
	}
}

// exec runs one step: its if, then its call or its for_each calls.
func (rn *run) exec(ctx context.Context, s *Step, steps map[string]any) (any, string, error) {
	p := rn.p
	rn.states[s.index].ready = time.Now()
	rn.recStep(s, func(sr *StepRecord) { sr.Status = StatusRunning })
	env := func() map[string]any {
		return map[string]any{"inputs": rn.inputs, "env": p.env, "steps": steps}
	}
	if s.cond != nil {
		v, err := p.eng.eval(ctx, s.cond, env())
		if err != nil {
			return nil, "", fmt.Errorf("if: %w", err)
		}
		b, ok := v.(bool)
		if !ok && v != nil {
			return nil, "", fmt.Errorf("if: ${{ %s }} gave %s, not true or false", s.cond.src, typeOf(v))
		}
		if !b {
			return nil, StatusSkipped, nil
		}
	}
	rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: "started"}, false)
	if s.forEach == nil {
		out, err := rn.call(ctx, s, env(), 0, 0)
		return out, StatusSucceeded, err
	}
	v, err := s.forEach.eval(ctx, p.eng, env())
	if err != nil {
		return nil, "", place("for_each", err)
	}
	items, err := toList(v)
	if err != nil {
		return nil, "", fmt.Errorf("for_each: %w", err)
	}
	if len(items) > p.eng.lim.Items {
		return nil, "", fmt.Errorf("%w: for_each has %d items, more than the %d allowed", ErrBudget, len(items), p.eng.lim.Items)
	}
	rn.recStep(s, func(sr *StepRecord) { sr.Items = len(items) })
	return rn.fanOut(ctx, s, steps, items)
}

func toList(v any) ([]any, error) {
	switch l := v.(type) {
	case []any:
		return l, nil
	case nil:
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("want a list, got %s", typeOf(v))
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, nil
}

// fanOut calls s's tool once per item, at most s.Concurrency at a time.
// Unless on_error is continue, the first failing item stops the others.
func (rn *run) fanOut(ctx context.Context, s *Step, steps map[string]any, items []any) (any, string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	outs := make([]any, len(items))
	var (
		mu       sync.Mutex
		firstErr error
		failed   int
		canceled int // items stopped by a cancellation
		wg       sync.WaitGroup
	)
	limit := make(chan struct{}, s.Concurrency)
loop:
	for i, item := range items {
		select {
		case limit <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-limit }()
			env := map[string]any{"inputs": rn.inputs, "env": rn.p.env, "steps": steps, "item": item, "index": i}
			out, err := rn.call(ctx, s, env, i+1, len(items))
			if err != nil {
				mu.Lock()
				// Stopped by a cancellation (another item failed, the
				// run failed elsewhere, or the client cancelled): not
				// a failure of this item.
				if ctx.Err() != nil {
					canceled++
					mu.Unlock()
					rn.recStep(s, func(sr *StepRecord) { sr.ItemsCanceled++ })
					rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: "canceled", Item: i + 1, Items: len(items)}, false)
					return
				}
				failed++
				if firstErr == nil {
					firstErr = fmt.Errorf("item %d: %w", i+1, err)
				}
				mu.Unlock()
				rn.recStep(s, func(sr *StepRecord) { sr.ItemsFailed++ })
				rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: "failed", Item: i + 1, Items: len(items), Err: err.Error()}, false)
				if s.OnError != "continue" {
					cancel(err)
				}
				return
			}
			outs[i] = out
			rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: "finished", Item: i + 1, Items: len(items)}, false)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		switch {
		case canceled > 0:
			firstErr = fmt.Errorf("%d of %d items failed and %d were canceled; first: %w", failed, len(items), canceled, firstErr)
		case failed > 1:
			firstErr = fmt.Errorf("%d of %d items failed; first: %w", failed, len(items), firstErr)
		}
		if s.OnError == "continue" {
			// Keep the items that worked for the steps after.
			return outs, StatusFailed, firstErr
		}
		return nil, StatusFailed, firstErr
	}
	if err := ctx.Err(); err != nil {
		if canceled > 0 {
			err = fmt.Errorf("%d of %d items were canceled: %w", canceled, len(items), err)
		}
		return nil, StatusCanceled, err
	}
	return outs, StatusSucceeded, nil
}

// call evaluates s's arguments and calls its tool, retrying as s says.
func (rn *run) call(ctx context.Context, s *Step, env map[string]any, item, items int) (any, error) {
	args := s.withJSON
	if args == nil {
		v, err := s.with.eval(ctx, rn.p.eng, env)
		if err != nil {
			return nil, place("with", err)
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("with: the arguments must be an object, got %s", typeOf(v))
		}
		if args, err = marshalBounded(v, rn.p.eng.lim.String); err != nil {
			return nil, fmt.Errorf("with: %w", err)
		}
	}
	cctx, err := Enter(ctx, s.Tool, rn.maxDeep)
	if err != nil {
		return nil, err
	}
	backoff := s.Retry.Backoff
	for attempt := 1; ; attempt++ {
		out, err := rn.attempt(cctx, s, args, attempt, item, items)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		var ce *ChainError
		if attempt > s.Retry.Max || errors.As(err, &ce) {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: "retrying", Attempt: attempt, Item: item, Items: items, Err: err.Error()}, false)
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, err
			}
			backoff = min(backoff*2, time.Minute)
		}
	}
}

// attempt makes attempt n of one call, within the run's parallelism and
// s's timeout, for the for_each item of items (0 when s has none). What
// the tool reports while it runs becomes progress events of s. The step's
// record starts with its first call, once that has a slot: the time
// before is queued.
func (rn *run) attempt(ctx context.Context, s *Step, args json.RawMessage, n, item, items int) (any, error) {
	select {
	case rn.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-rn.sem }()
	now, ready := time.Now(), rn.states[s.index].ready
	rn.recStep(s, func(sr *StepRecord) {
		if sr.Started.IsZero() {
			sr.Started, sr.Queued = now, now.Sub(ready)
		}
		sr.Attempts = max(sr.Attempts, n)
		sr.Calls++
	})
	cctx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	var returned atomic.Bool
	defer returned.Store(true)
	if rn.prog != nil {
		cctx = context.WithValue(cctx, stepProgressKey{}, func(progress, total float64, message string) {
			if !returned.Load() {
				rn.emit(Progress{Step: s.ID, Tool: s.Tool, Event: "progress", Item: item, Items: items,
					StepProgress: progress, StepTotal: total, Message: message}, false)
			}
		})
	}
	raw, err := rn.caller.CallTool(cctx, s.Tool, args)
	if err != nil {
		if ctx.Err() == nil && cctx.Err() != nil {
			return nil, fmt.Errorf("timed out after %s", s.Timeout)
		}
		return nil, err
	}
	return stepOutput(raw)
}
