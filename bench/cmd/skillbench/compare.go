package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// variant is one side of a comparison: a name and the request it repeats
// (several, sent in turn, for a mix).
type variant struct {
	name string
	reqs []request
}

// outcome is what a variant measured over every round.
type outcome struct {
	rps     []float64 // one per round
	errors  int
	latency latency
}

func (o outcome) meanRPS() float64 {
	if len(o.rps) == 0 {
		return 0
	}
	var s float64
	for _, v := range o.rps {
		s += v
	}
	return s / float64(len(o.rps))
}

// compare measures every variant's throughput under the load generator and
// its sequential latency, o.rounds times each, the order reversed every
// other round (A B C C B A ...).
func (b *bench) compare(ctx context.Context, what string, vs []variant) (map[string]*outcome, error) {
	out := map[string]*outcome{}
	samples := map[string][]time.Duration{}
	for _, v := range vs {
		out[v.name] = &outcome{}
	}
	for r := range b.o.rounds {
		order := slices.Clone(vs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, v := range order {
			t, err := b.lg.run(ctx, b.o.duration, v.reqs...)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", what, v.name, err)
			}
			out[v.name].rps = append(out[v.name].rps, t.rps)
			out[v.name].errors += t.errors
			logf("%s %-10s round %d: %8.0f req/s (%d errors)", what, v.name, r+1, t.rps, t.errors)
		}
		for _, v := range order {
			s, err := sequential(ctx, v.reqs[0], b.o.seqN, b.o.seqDur)
			if err != nil {
				return nil, fmt.Errorf("%s %s sequential: %w", what, v.name, err)
			}
			samples[v.name] = append(samples[v.name], s...)
		}
	}
	for name, o := range out {
		o.latency = summarize(samples[name])
		logf("%s %-10s mean %8.0f req/s, sequential p50 %v p99 %v (n=%d)", what, name, o.meanRPS(), o.latency.p50, o.latency.p99, o.latency.n)
	}
	return out, nil
}

// listAndCall runs comparisons 1 (tools/list) and 2 (tools/call) against
// one bare upstream and two gateways (process and in-process isolation).
func (b *bench) listAndCall(ctx context.Context) error {
	bare, bareURL, err := b.startUpstreamHTTP(ctx, b.o.tools)
	if err != nil {
		return err
	}
	defer bare.stop()
	cfgP, err := b.writeConfig("process", 1, b.o.tools, "")
	if err != nil {
		return err
	}
	cfgI, err := b.writeConfig("inprocess", 1, b.o.tools, "inprocess")
	if err != nil {
		return err
	}
	gwP, err := startGateway(ctx, b.dir, "gw-process", b.sg, cfgP, b.o.tools)
	if err != nil {
		return err
	}
	defer gwP.stop()
	gwI, err := startGateway(ctx, b.dir, "gw-inprocess", b.sg, cfgI, b.o.tools)
	if err != nil {
		return err
	}
	defer gwI.stop()

	c := newClient(10 * time.Second)
	defer c.CloseIdleConnections()
	for _, e := range []era{legacy, modern} {
		epB, err := connect(ctx, c, bareURL, e)
		if err != nil {
			return err
		}
		epP, err := connect(ctx, c, gwP.url, e)
		if err != nil {
			return err
		}
		epI, err := connect(ctx, c, gwI.url, e)
		if err != nil {
			return err
		}
		if b.want("list") {
			nB, sizeB, err := countTools(ctx, c, epB)
			if err != nil {
				return fmt.Errorf("bare tools/list: %w", err)
			}
			nP, sizeP, err := countTools(ctx, c, epP)
			if err != nil {
				return fmt.Errorf("gateway tools/list: %w", err)
			}
			if nB != b.o.tools || nP != b.o.tools {
				return fmt.Errorf("tools/list sizes differ: bare %d, gateway %d, want %d", nB, nP, b.o.tools)
			}
			b.rep.listBytes[e] = [2]int{sizeB, sizeP}
			res, err := b.compare(ctx, "tools/list "+string(e), []variant{
				{"bare", []request{epB.listRequest()}},
				{"gateway", []request{epP.listRequest()}},
			})
			if err != nil {
				return err
			}
			b.rep.list[e] = res
		}
		if b.want("call") {
			for _, x := range []struct {
				ep   *endpoint
				tool string
			}{{epB, "echo"}, {epP, "up__echo"}, {epI, "up__echo"}} {
				if err := checkCall(ctx, c, x.ep, x.tool); err != nil {
					return err
				}
			}
			res, err := b.compare(ctx, "tools/call "+string(e), []variant{
				{"direct", []request{epB.callRequest("echo")}},
				{"process", []request{epP.callRequest("up__echo")}},
				{"inprocess", []request{epI.callRequest("up__echo")}},
			})
			if err != nil {
				return err
			}
			b.rep.call[e] = res
		}
	}
	return nil
}

// startUpstreamHTTP runs the upstream over streamable HTTP and returns its URL.
func (b *bench) startUpstreamHTTP(ctx context.Context, tools int) (*proc, string, error) {
	p, err := startProcStdout(b.dir, "upstream-http", b.up, "-transport", "http", "-tools", strconv.Itoa(tools))
	if err != nil {
		return nil, "", err
	}
	select {
	case url := <-p.firstLine:
		return p.proc, url, nil
	case <-p.done:
		return nil, "", fmt.Errorf("upstream exited before listening (log: %s)", p.log)
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, "", fmt.Errorf("upstream printed no URL within 10 s (log: %s)", p.log)
	case <-ctx.Done():
		p.stop()
		return nil, "", ctx.Err()
	}
}

// rss measures the gateway and its executors (not the upstreams) with 10
// upstreams of 100 tools, after start and at the peak of a load burst.
func (b *bench) rss(ctx context.Context) error {
	const servers, tools = 10, 100
	for _, iso := range []string{"process", "inprocess"} {
		isolation := iso
		if iso == "process" {
			isolation = ""
		}
		cfg, err := b.writeConfig("rss-"+iso, servers, tools, isolation)
		if err != nil {
			return err
		}
		gw, err := startGateway(ctx, b.dir, "gw-rss-"+iso, b.sg, cfg, servers*tools)
		if err != nil {
			return err
		}
		res, err := b.rssOf(ctx, gw, servers)
		if serr := gw.stop(); err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
		b.rep.rss[iso] = res
		logf("rss %s: %.1f MiB after start, %.1f MiB peak under load (%d processes)", iso, mib(res.idle), mib(res.peak), res.procs)
	}
	return nil
}

type rssResult struct {
	idle, peak int // KiB
	procs      int
}

func mib(kib int) float64 { return float64(kib) / 1024 }

func (b *bench) rssOf(ctx context.Context, gw *gateway, servers int) (rssResult, error) {
	time.Sleep(time.Second) // let start-up garbage be collected
	idle, procs := treeRSS(gw.pid(), b.sg)
	res := rssResult{idle: idle, peak: idle, procs: procs}

	c := newClient(10 * time.Second)
	defer c.CloseIdleConnections()
	ep, err := connect(ctx, c, gw.url, legacy)
	if err != nil {
		return res, err
	}
	calls := make([]request, 0, servers)
	for i := range servers {
		tool := fmt.Sprintf("s%d__echo", i)
		if err := checkCall(ctx, c, ep, tool); err != nil {
			return res, err
		}
		calls = append(calls, ep.callRequest(tool))
	}
	if b.lg.tool != "wrk" {
		calls = calls[:1]
	}
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				kib, _ := treeRSS(gw.pid(), b.sg)
				mu.Lock()
				res.peak = max(res.peak, kib)
				mu.Unlock()
			}
		}
	}()
	d := min(b.o.duration, 3*time.Second)
	_, err1 := b.lg.run(ctx, d, ep.listRequest())
	_, err2 := b.lg.run(ctx, d, calls...)
	close(stop)
	<-done
	if err1 != nil {
		return res, err1
	}
	return res, err2
}
