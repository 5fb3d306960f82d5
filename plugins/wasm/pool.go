package wasm

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero/api"
)

// instance is one initialized reactor instance. It runs one call at a time:
// the pool hands it to a single caller, which resets its stdio, calls the
// function and gives it back.
type instance struct {
	mod    api.Module
	fn     api.Function
	stdin  bytes.Reader
	stdout capBuffer
	stderr stderrLines
	dead   bool // trapped, exited or timed out: close it instead of reusing it
}

// pool keeps up to max warm instances of a reactor. Idle instances wait in
// idle; slots counts the instances alive, in use or idle.
type pool struct {
	t     *tool
	max   int
	idle  chan *instance
	slots chan struct{}

	mu     sync.Mutex
	closed bool
}

func newPool(t *tool, max int) *pool {
	return &pool{t: t, max: max, idle: make(chan *instance, max), slots: make(chan struct{}, max)}
}

// get returns an idle instance, or starts a new one while fewer than max
// are alive, or waits for one to be given back until ctx is done.
func (p *pool) get(ctx context.Context) (*instance, error) {
	select {
	case in := <-p.idle:
		return in, nil
	default:
	}
	select {
	case in := <-p.idle:
		return in, nil
	case p.slots <- struct{}{}:
		in, err := p.start(ctx)
		if err != nil {
			<-p.slots
			return nil, err
		}
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put gives an instance back, closing it when it is dead or the pool is
// closed.
func (p *pool) put(in *instance) {
	p.mu.Lock()
	closed := p.closed
	if !closed && !in.dead && !in.mod.IsClosed() {
		p.idle <- in // never blocks: at most max instances exist
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	_ = in.mod.Close(context.Background())
	<-p.slots
}

// close closes the idle instances; instances in use are closed when given
// back (or with the runtime).
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case in := <-p.idle:
			_ = in.mod.Close(context.Background())
			<-p.slots
		default:
			return
		}
	}
}

// start instantiates the module and runs its _initialize (Go's runtime and
// package init); what it writes goes to the executor's log.
func (p *pool) start(ctx context.Context) (*instance, error) {
	t := p.t
	in := &instance{stdout: capBuffer{max: t.cfg.outputCap}}
	in.stderr.logger = t.cfg.name
	in.stderr.logf = func(line string) {
		if in.stderr.call == nil {
			t.log.Info("wasm stderr", "line", line)
		}
	}
	mc := t.modCfg.
		WithArgs(t.cfg.entry).
		WithStdin(&in.stdin).
		WithStdout(&in.stdout).
		WithStderr(&in.stderr)
	mod, err := t.rt.InstantiateModule(ctx, t.compiled, mc)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %s", describe(err))
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			in.stderr.flush()
			_ = mod.Close(context.WithoutCancel(ctx))
			msg := describe(err)
			if tail := in.stderr.tailText(); tail != "" {
				msg += "; stderr: " + tail
			}
			return nil, fmt.Errorf("_initialize: %s", msg)
		}
	}
	in.stderr.flush()
	in.mod = mod
	in.fn = mod.ExportedFunction(t.cfg.function)
	return in, nil
}
