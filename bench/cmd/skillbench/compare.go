package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
	"github.com/skillgate/skillgate/gateway/disclosure"
)

// variant is one side of a comparison: a name and the request it repeats
// (several, sent in turn, for a mix).
type variant struct {
	name string
	reqs []mcpclient.Request
	// root is the serving process (the bare upstream or the gateway), in
	// role rootRole; the CPU of it and its descendants is accounted per
	// call when root is set.
	root     int
	rootRole string
}

// outcome is what a variant measured over every round.
type outcome struct {
	rps     []float64 // one per round
	errors  int
	latency latency
	cpu     map[string]time.Duration // per role, summed over the load runs
	calls   int                      // requests completed in the load runs
}

// cpuPerCall is role's CPU time per request under load.
func (o outcome) cpuPerCall(role string) time.Duration {
	if o.calls == 0 {
		return 0
	}
	return o.cpu[role] / time.Duration(o.calls)
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
		out[v.name] = &outcome{cpu: map[string]time.Duration{}}
	}
	for r := range b.o.rounds {
		order := slices.Clone(vs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, v := range order {
			var before map[string]time.Duration
			if v.root != 0 {
				before = treeCPU(v.root, v.rootRole)
			}
			t, err := b.lg.run(ctx, b.o.duration, v.reqs...)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", what, v.name, err)
			}
			o := out[v.name]
			o.rps = append(o.rps, t.rps)
			o.errors += t.errors
			if v.root != 0 {
				for role, c := range treeCPU(v.root, v.rootRole) {
					o.cpu[role] += c - before[role]
				}
				o.cpu[roleLoad] += t.cpu
				o.calls += t.requests
			}
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
	defer stopLogged(bare)
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
	defer stopLogged(gwP.proc)
	gwI, err := startGateway(ctx, b.dir, "gw-inprocess", b.sg, cfgI, b.o.tools)
	if err != nil {
		return err
	}
	defer stopLogged(gwI.proc)
	// The same plugin-process gateway with calls on the gRPC stream
	// (protocol 2) instead of the executor's side channel (3).
	var gwS *gateway
	if b.want("call") {
		gwS, err = startGatewayEnv(ctx, b.dir, "gw-stream", b.sg, cfgP, b.o.tools, []string{"SKILLGATE_EXECUTOR_PROTOCOL=2"})
		if err != nil {
			return err
		}
		defer stopLogged(gwS.proc)
	}

	// The gateway tells sessions that exist when its catalog changes at
	// start-up (list_changed), and a legacy session that was told anything
	// answers over SSE from then on. Sessions opened after it settled stay
	// on plain JSON; sseEra measures the other kind on purpose.
	time.Sleep(time.Second)

	c := mcpclient.NewClient(10 * time.Second)
	defer c.CloseIdleConnections()
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern, sseEra} {
		if e == sseEra {
			if !b.want("call") {
				continue
			}
			if err := b.callOnSSE(ctx, c, bareURL, gwP.url, gwI.url); err != nil {
				return err
			}
			continue
		}
		epB, err := mcpclient.Connect(ctx, c, bareURL, e)
		if err != nil {
			return err
		}
		epP, err := mcpclient.Connect(ctx, c, gwP.url, e)
		if err != nil {
			return err
		}
		epI, err := mcpclient.Connect(ctx, c, gwI.url, e)
		if err != nil {
			return err
		}
		if b.want("list") {
			nB, sizeB, err := mcpclient.CountTools(ctx, c, epB)
			if err != nil {
				return fmt.Errorf("bare tools/list: %w", err)
			}
			nP, sizeP, err := mcpclient.CountTools(ctx, c, epP)
			if err != nil {
				return fmt.Errorf("gateway tools/list: %w", err)
			}
			// The gateway also lists its five meta-tools (~2.5 KB).
			if nB != b.o.tools || nP != b.o.tools+len(disclosure.Names) {
				return fmt.Errorf("tools/list sizes differ: bare %d, gateway %d, want %d (+%d meta-tools)", nB, nP, b.o.tools, len(disclosure.Names))
			}
			b.rep.listBytes[e] = [2]int{sizeB, sizeP}
			res, err := b.compare(ctx, "tools/list "+string(e), []variant{
				{"bare", []mcpclient.Request{epB.ListRequest()}, bare.pid(), roleUpstream},
				{"gateway", []mcpclient.Request{epP.ListRequest()}, gwP.pid(), roleGateway},
			})
			if err != nil {
				return err
			}
			b.rep.list[e] = res
		}
		if b.want("call") {
			epS, err := mcpclient.Connect(ctx, c, gwS.url, e)
			if err != nil {
				return err
			}
			for _, x := range []struct {
				ep   *mcpclient.Endpoint
				tool string
			}{{epB, "echo"}, {epP, "up__echo"}, {epI, "up__echo"}, {epS, "up__echo"}} {
				if err := mcpclient.CheckCall(ctx, c, x.ep, x.tool); err != nil {
					return err
				}
			}
			for _, x := range []struct {
				name string
				ep   *mcpclient.Endpoint
			}{{"gateway (plugin process)", epP}, {"gateway (inprocess)", epI}} {
				if sse, err := mcpclient.AnswersSSE(ctx, c, x.ep.CallRequest("up__echo")); err != nil {
					return err
				} else if sse {
					b.rep.note("the %s %s session answered over SSE before the tools/call runs: it received a notification", x.name, e)
				}
			}
			res, err := b.compare(ctx, "tools/call "+string(e), []variant{
				{"direct", []mcpclient.Request{epB.CallRequest("echo")}, bare.pid(), roleUpstream},
				{"process", []mcpclient.Request{epP.CallRequest("up__echo")}, gwP.pid(), roleGateway},
				{"inprocess", []mcpclient.Request{epI.CallRequest("up__echo")}, gwI.pid(), roleGateway},
				{"stream", []mcpclient.Request{epS.CallRequest("up__echo")}, gwS.pid(), roleGateway},
			})
			if err != nil {
				return err
			}
			b.rep.call[e] = res
		}
	}
	return nil
}

// sseEra stands for legacy sessions that declared a capability for
// server-to-client requests (roots) and were sent a progress notification,
// after which a bare mcp-go server answers them over SSE.
const sseEra mcpclient.Era = "legacy-sse"

// callOnSSE compares tools/call on legacy sessions that a progress
// notification switched to SSE, on the bare upstream and the two gateways.
func (b *bench) callOnSSE(ctx context.Context, c *http.Client, bareURL, procURL, inprocURL string) error {
	var eps []*mcpclient.Endpoint
	for _, x := range []struct{ url, tool string }{{bareURL, "progress"}, {procURL, "up__progress"}, {inprocURL, "up__progress"}} {
		ep, err := mcpclient.ConnectWith(ctx, c, x.url, mcpclient.Legacy, rootsClient)
		if err != nil {
			return err
		}
		sse, err := mcpclient.SendProgress(ctx, c, ep, x.tool)
		if err != nil {
			return err
		}
		if x.url == bareURL && !sse {
			return fmt.Errorf("%s: the bare server still answers application/json after a progress notification", x.url)
		}
		eps = append(eps, ep)
	}
	res, err := b.compare(ctx, "tools/call "+string(sseEra), []variant{
		{name: "direct", reqs: []mcpclient.Request{eps[0].CallRequest("echo")}},
		{name: "process", reqs: []mcpclient.Request{eps[1].CallRequest("up__echo")}},
		{name: "inprocess", reqs: []mcpclient.Request{eps[2].CallRequest("up__echo")}},
	})
	if err != nil {
		return err
	}
	b.rep.call[sseEra] = res
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
		logf("rss %s: %.1f MiB after start, %.1f MiB peak under load (%d processes); +%d KiB over %d calls on an SSE session", iso, mib(res.idle), mib(res.peak), res.procs, res.sseGrowth, res.sseCalls)
	}
	return nil
}

type rssResult struct {
	idle, peak     int // KiB of summed RSS, gateway and executors
	idleGW, peakGW int // KiB, the gateway process alone
	idlePSS        int // KiB of summed PSS, gateway and executors, after start
	peakPSS        int // ... at the peak of summed RSS
	procs          int
	sseCalls       int // calls on a session declaring roots, after a notification
	sseGrowth      int // KiB the gateway and executors grew meanwhile
}

func mib(kib int) float64 { return float64(kib) / 1024 }

func (b *bench) rssOf(ctx context.Context, gw *gateway, servers int) (rssResult, error) {
	time.Sleep(time.Second) // let start-up garbage be collected
	idle, idleGW, procs := treeMem(gw.pid(), b.sg)
	res := rssResult{idle: idle.rss, peak: idle.rss, idleGW: idleGW.rss, peakGW: idleGW.rss,
		idlePSS: idle.pss, peakPSS: idle.pss, procs: procs}

	c := mcpclient.NewClient(10 * time.Second)
	defer c.CloseIdleConnections()
	ep, err := mcpclient.Connect(ctx, c, gw.url, mcpclient.Legacy)
	if err != nil {
		return res, err
	}
	calls := make([]mcpclient.Request, 0, servers)
	for i := range servers {
		tool := fmt.Sprintf("s%d__echo", i)
		if err := mcpclient.CheckCall(ctx, c, ep, tool); err != nil {
			return res, err
		}
		calls = append(calls, ep.CallRequest(tool))
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
				m, gwMem, _ := treeMem(gw.pid(), b.sg)
				mu.Lock()
				if m.rss > res.peak {
					res.peak, res.peakGW, res.peakPSS = m.rss, gwMem.rss, m.pss
				}
				mu.Unlock()
			}
		}
	}()
	d := min(b.o.duration, 3*time.Second)
	_, err1 := b.lg.run(ctx, d, ep.ListRequest())
	_, err2 := b.lg.run(ctx, d, calls...)
	close(stop)
	<-done
	if err1 != nil {
		return res, err1
	}
	if err2 != nil {
		return res, err2
	}

	// A legacy session that declared roots and was sent a notification
	// (which, through mcp-go, meant SSE answers kept in memory); measure
	// what each call on it leaves behind.
	sse, err := mcpclient.ConnectWith(ctx, c, gw.url, mcpclient.Legacy, rootsClient)
	if err != nil {
		return res, err
	}
	if _, err := mcpclient.SendProgress(ctx, c, sse, "s0__progress"); err != nil {
		return res, err
	}
	before, _, _ := treeMem(gw.pid(), b.sg)
	t, err := b.lg.run(ctx, d, sse.CallRequest("s0__echo"))
	if err != nil {
		return res, err
	}
	time.Sleep(time.Second)
	after, _, _ := treeMem(gw.pid(), b.sg)
	res.sseCalls = int(t.rps * d.Seconds())
	res.sseGrowth = after.rss - before.rss
	return res, nil
}

// rootsClient declares roots: a client with a capability for server
// requests is served through mcp-go's sessions (the SSE rows measure that
// path), not the gateway's fast path for plain clients.
var rootsClient = map[string]any{"roots": map[string]any{}}
