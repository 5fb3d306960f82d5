package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/skillgate/skillgate/plugins/sdk"
)

const (
	// probeTimeout bounds the health check of a process whose connection
	// failed while it still runs.
	probeTimeout = 2 * time.Second
	// reloadTimeout bounds the re-load of one source after a restart.
	reloadTimeout = time.Minute
	// reloadParallel is how many sources are re-loaded at once.
	reloadParallel = 8
	// watchRetry is how long to wait before watching again after a
	// plugin's Watch failed.
	watchRetry = time.Second
)

// Source states sent to watchers in sdk.Status.State.
const (
	sourceStarting = "starting"
	sourceReady    = "ready"
	sourceFailed   = "failed"
)

// supervise waits for inst to go down, then restarts the plugin, until ctx
// is done.
func (p *Plugin) supervise(ctx context.Context, inst *instance) {
	defer p.wg.Done()
	bo := backoff{min: p.opts.MinBackoff, max: p.opts.MaxBackoff}
	for {
		select {
		case <-ctx.Done():
			return
		case <-inst.down:
		}
		if !p.markDown(inst) {
			return // closed; Close tears inst down
		}
		p.teardown(inst, inst.cause)
		if time.Since(inst.started) >= p.opts.MaxBackoff {
			bo.reset()
		}
		if inst = p.restart(ctx, &bo, inst.cause); inst == nil {
			return
		}
	}
}

// markDown takes inst out of service and tells the watchers its sources are
// coming back. It returns false when the plugin is closed.
func (p *Plugin) markDown(inst *instance) bool {
	p.mu.Lock()
	if p.closed.Load() || p.cur.Load() != inst {
		p.mu.Unlock()
		return false
	}
	p.cur.Store(nil)
	p.status.State = StateRestarting
	p.status.PID = 0
	p.status.Protocol = 0
	p.status.LastError = inst.cause
	p.status.Since = time.Now()
	names := p.sourceNamesLocked()
	for _, name := range names {
		// Each source restarts with the plugin: its count goes on from
		// where it was, one more.
		src := p.sources[name]
		src.base = src.last + 1
		p.sources[name] = src
	}
	p.mu.Unlock()

	p.log.Warn("executor went down", "pid", inst.pid, "cause", inst.cause)
	reason := fmt.Sprintf("executor %q %s", p.spec.Name, inst.cause)
	for _, name := range names {
		p.deliver(sdk.Change{Source: name, Status: &sdk.Status{State: sourceStarting, LastError: reason}})
	}
	return true
}

// restart launches the plugin again after a backoff, until a launch and the
// re-load of its sources succeed (it returns the new instance) or ctx is
// done (it returns nil).
func (p *Plugin) restart(ctx context.Context, bo *backoff, cause string) *instance {
	state := StateRestarting
	for {
		delay := bo.next()
		var restarts int
		if !p.updateStatus(func(st *Status) {
			if st.State != state {
				st.Since = time.Now()
			}
			st.State = state
			st.LastError = cause
			st.NextRestart = time.Now().Add(delay)
			restarts = st.Restarts
		}) {
			return nil
		}
		// The count this launch will have in Status.Restarts, so that the
		// log and the status agree.
		p.log.Warn("executor restarting", "state", string(state), "delay", delay, "restarts", restarts+1, "cause", cause)

		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}

		if !p.updateStatus(func(st *Status) {
			st.Restarts++
			st.State = StateStarting
			st.Since = time.Now()
			st.NextRestart = time.Time{}
		}) {
			return nil
		}

		inst, info, err := p.launch(ctx, ctx)
		if err == nil {
			var reloaded []reloadResult
			if reloaded, err = p.reload(ctx, inst, info); err == nil {
				p.log.Info("executor restarted", "pid", inst.pid, "sources", len(reloaded))
				p.emitReloaded(inst, reloaded)
				return inst
			}
			err = fmt.Errorf("re-load sources: %w", err)
			p.teardown(inst, err.Error())
		}
		if ctx.Err() != nil {
			return nil
		}
		cause, state = err.Error(), StateFailed
		if errors.Is(err, ErrGaveUp) {
			if !p.waitRetryable(ctx, err) {
				return nil
			}
			bo.reset()
		}
	}
}

// waitRetryable parks a plugin the host gave up on (err) in StateFailed,
// without a NextRestart, and marks its sources failed, until its file
// changes or the manager forgets the failures. It returns false when ctx
// is done or the plugin was closed.
func (p *Plugin) waitRetryable(ctx context.Context, err error) bool {
	var names []string
	if !p.updateStatus(func(st *Status) {
		if st.State != StateFailed {
			st.Since = time.Now()
		}
		st.State = StateFailed
		st.LastError = err.Error()
		st.NextRestart = time.Time{}
		names = p.sourceNamesLocked()
	}) {
		return false
	}
	reason := fmt.Sprintf("executor %q: %v", p.spec.Name, err)
	for _, name := range names {
		p.deliver(sdk.Change{Source: name, Status: &sdk.Status{State: sourceFailed, LastError: reason}})
	}
	t := time.NewTicker(fileCheckInterval)
	defer t.Stop()
	for !p.tries.retryable() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	p.log.Info("executor file changed: starting it again", "path", p.spec.Path)
	return true
}

// updateStatus changes the status unless the plugin is closed, and reports
// whether it did.
func (p *Plugin) updateStatus(f func(*Status)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return false
	}
	f(&p.status)
	return true
}

type reloadResult struct {
	src  source
	defs sdk.Definitions
	err  error
}

// reload loads every remembered source into inst and, unless inst died
// meanwhile or the plugin was closed, makes inst the running process.
// Loads and Unloads wait meanwhile, so nothing is missed or resurrected.
func (p *Plugin) reload(ctx context.Context, inst *instance, info sdk.Info) ([]reloadResult, error) {
	p.loadMu.Lock()
	defer p.loadMu.Unlock()
	p.mu.Lock()
	srcs := make([]source, 0, len(p.sources))
	for _, s := range p.sources {
		srcs = append(srcs, s)
	}
	p.mu.Unlock()
	slices.SortFunc(srcs, func(a, b source) int { return cmp.Compare(a.seq, b.seq) })

	out := make([]reloadResult, len(srcs))
	sem := make(chan struct{}, reloadParallel)
	var wg sync.WaitGroup
	for i, s := range srcs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			lctx, cancel := context.WithTimeout(ctx, reloadTimeout)
			defer cancel()
			defs, err := inst.exec.Load(lctx, s.req)
			out[i] = reloadResult{src: s, defs: defs, err: err}
		}()
	}
	wg.Wait()

	if cause, down := inst.isDown(); down {
		return nil, errors.New(cause)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return nil, ErrClosed
	}
	p.info = info
	p.publishLocked(inst)
	return out, nil
}

// emitReloaded tells the watchers what each source offers after a restart.
// A source loaded or unloaded again since the re-load began is skipped:
// that newer answer went to its caller.
func (p *Plugin) emitReloaded(inst *instance, results []reloadResult) {
	for _, r := range results {
		p.mu.Lock()
		cur, ok := p.sources[r.src.req.Source]
		p.mu.Unlock()
		if !ok || cur.seq != r.src.seq {
			continue
		}
		ch := sdk.Change{Source: r.src.req.Source}
		if r.err != nil {
			p.log.Warn("source failed to re-load after a restart", "source", ch.Source, "error", r.err)
			ch.Status = &sdk.Status{State: sourceFailed,
				LastError: fmt.Sprintf("re-load after executor %q restarted: %v", p.spec.Name, r.err)}
		} else {
			defs := r.defs
			ch.Definitions = &defs
			// The source's own state (its upstream's pid, say), as a load
			// reports it; deliver adds the restarts before this process.
			st := sdk.Status{State: sourceReady}
			if defs.Status != nil {
				st = *defs.Status
			}
			ch.Status = &st
		}
		p.deliver(ch)
	}
}

// teardown stops inst: its goroutines end, the process is asked to shut
// down and its group is SIGKILLed after KillWindow (at once if it already
// exited). It returns when the process is reaped. Safe to call twice.
func (p *Plugin) teardown(inst *instance, cause string) {
	inst.die(cause)
	inst.teardownOnce.Do(func() {
		inst.stop()
		window := p.opts.KillWindow
		inst.proc.setDeadline(time.Now().Add(window))
		killed := make(chan struct{})
		go func() {
			inst.gp.Kill() // graceful: go-plugin's Shutdown, then proc.Kill
			close(killed)
		}()
		t := time.NewTimer(window)
		select {
		case <-inst.proc.exited:
		case <-t.C:
			p.log.Warn("executor did not exit in time; killing its process group", "pid", inst.pid, "kill_window", window)
			inst.proc.kill()
		}
		t.Stop()
		<-killed
		_ = inst.exec.Close()
	})
}

// monitor notices when inst's process exits, and health-checks it when a
// request saw its connection fail.
func (p *Plugin) monitor(ctx context.Context, inst *instance, stderr *lineLogger) {
	defer p.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-inst.proc.exited:
			inst.die(exitCause(inst.proc, stderr))
			return
		case <-inst.probe:
			alive := inst.probing()
			if inst.conn == nil {
				close(alive) // nothing to check with: taken for alive
				continue
			}
			hctx, cancel := context.WithTimeout(ctx, probeTimeout)
			_, err := grpc_health_v1.NewHealthClient(inst.conn).Check(hctx,
				&grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
			cancel()
			if err == nil {
				close(alive)
				continue
			}
			if ctx.Err() != nil {
				return // the instance is being torn down, which ends it
			}
			// A dead process fails the check at once, often before its
			// exit is seen; then the exit is the better cause.
			t := time.NewTimer(exitWait)
			select {
			case <-inst.proc.exited:
				t.Stop()
				inst.die(exitCause(inst.proc, stderr))
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			inst.die("stopped answering: " + err.Error())
			return
		}
	}
}

// exitCause describes how a process exited: "exited: exit status 2 (panic: boom)".
func exitCause(pr *proc, stderr *lineLogger) string {
	err, _ := pr.exitErr()
	s := "exited with status 0"
	if err != nil {
		s = "exited: " + err.Error()
	}
	// The panic message may still be in the pipe: wait until it is read
	// to its end, which the pipe's drain timer bounds (drainGrace).
	<-pr.copied
	if _, panicLine := stderr.Tail(); panicLine != "" {
		s += " (" + strconv.Quote(clip(panicLine)) + ")"
	}
	return s
}

// watch forwards inst's own changes to the watchers until ctx is done. A
// Watch that fails is called again after watchRetry; one that ends without
// an error is not.
func (p *Plugin) watch(ctx context.Context, inst *instance) {
	defer p.wg.Done()
	for {
		err := inst.exec.Watch(ctx, p.deliver)
		if ctx.Err() != nil || err == nil {
			return
		}
		if errors.Is(err, sdk.ErrPluginShutdown) {
			inst.requestProbe()
		}
		p.log.Debug("executor's Watch failed; watching again", "error", err, "in", watchRetry)
		t := time.NewTimer(watchRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// sourceNamesLocked returns the remembered sources in load order. p.mu must be held.
func (p *Plugin) sourceNamesLocked() []string {
	srcs := make([]source, 0, len(p.sources))
	for _, s := range p.sources {
		srcs = append(srcs, s)
	}
	slices.SortFunc(srcs, func(a, b source) int { return cmp.Compare(a.seq, b.seq) })
	names := make([]string, len(srcs))
	for i, s := range srcs {
		names[i] = s.req.Source
	}
	return names
}

// backoff yields capped exponential delays with jitter. Each delay is drawn
// from the upper half of the current step ([d/2, d]), so delays never shrink
// while the steps grow.
type backoff struct {
	min, max, step time.Duration
}

func (b *backoff) next() time.Duration {
	if b.step < b.min {
		b.step = b.min
	}
	d := b.step
	b.step = min(2*b.step, b.max)
	half := d / 2
	return half + rand.N(d-half+1)
}

func (b *backoff) reset() { b.step = 0 }
