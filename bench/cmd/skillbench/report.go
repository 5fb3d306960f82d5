package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
)

// Markers delimit the generated part of docs/PERFORMANCE.md.
const (
	beginMarker = "<!-- skillbench:begin -->"
	endMarker   = "<!-- skillbench:end -->"
)

// Targets from the performance issue.
const (
	targetListRatio     = 10.0
	targetCallRatioProc = 0.70
	targetCallDeltaProc = 180 * time.Microsecond
	targetCallRatioInP  = 0.85
	targetCallDeltaInP  = 90 * time.Microsecond
	targetColdOverUp    = 30 * time.Millisecond
	targetRSSMiB        = 60.0
)

type report struct {
	o       options
	started time.Time
	env     []string
	notes   []string

	pluginStart   latency
	upstreamStart latency
	coldStart     latency
	// coldStartInproc is coldStart with the mcp executor in process.
	coldStartInproc latency
	list            map[mcpclient.Era]map[string]*outcome
	listBytes       map[mcpclient.Era][2]int
	call            map[mcpclient.Era]map[string]*outcome
	rss             map[string]rssResult
	disclosure      *disclosureResult
	skills          *skillsResult
}

func newReport(o options) *report {
	return &report{
		o: o, started: time.Now().UTC(),
		list: map[mcpclient.Era]map[string]*outcome{}, listBytes: map[mcpclient.Era][2]int{},
		call: map[mcpclient.Era]map[string]*outcome{}, rss: map[string]rssResult{},
	}
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// machine records what the numbers depend on.
func (r *report) machine(ctx context.Context, root, loadgen string) {
	runRaw := func(name string, args ...string) string {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	run := func(name string, args ...string) string { return strings.TrimSpace(runRaw(name, args...)) }
	commit := run("git", "rev-parse", "--short", "HEAD")
	if dirty := strings.TrimRight(runRaw("git", "status", "--porcelain", "--", "cmd", "gateway", "plugins", "internal", "go.mod"), "\n"); dirty != "" {
		var files []string
		for _, l := range strings.Split(dirty, "\n") {
			if len(l) > 3 {
				files = append(files, strings.TrimSpace(l[3:]))
			}
		}
		commit += " plus uncommitted changes to " + strings.Join(files, ", ")
	}
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	lgv := run(loadgen, "-v")
	if loadgen == "wrk" {
		lgv = strings.SplitN(lgv, "\n", 2)[0]
		if i := strings.Index(lgv, " Copyright"); i > 0 {
			lgv = lgv[:i]
		}
	} else {
		lgv = "hey"
	}
	r.env = []string{
		fmt.Sprintf("commit %s", commit),
		fmt.Sprintf("%d CPUs (%s), %s, %s", runtime.NumCPU(), cpu, strings.TrimSpace(run("uname", "-sr")), run("go", "env", "GOVERSION")),
		fmt.Sprintf("load average at start %s; load generator (%s, %d threads, %d connections), gateway, executors and upstreams all share these CPUs", load, lgv, r.o.threads, r.o.concurrency),
		fmt.Sprintf("each throughput case: %d runs of %s in alternating order (A B C, C B A), mean reported; sequential: up to %d requests or %s per run after 50 warm-up requests, one kept-alive connection", r.o.rounds, r.o.duration, r.o.seqN, r.o.seqDur),
	}
}

// command is the command line that produced the report.
func (r *report) command() string {
	args := []string{"go", "run", "./bench/cmd/skillbench"}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"") {
			a = "'" + a + "'"
		}
		args = append(args, a)
	}
	return strings.Join(args, " ")
}

type row struct{ id, what, base, subject, ratio, target, result string }

func passMiss(ok bool) string {
	if ok {
		return "pass"
	}
	return "**miss**"
}

func rate(v float64) string { return commas(int(v+0.5)) + "/s" }

func commas(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func us(d time.Duration) string { return fmt.Sprintf("%d µs", d.Microseconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func eraLabel(e mcpclient.Era) string {
	if e == mcpclient.Modern {
		return "modern (2026-07-28, stateless)"
	}
	return "legacy (2025-11-25 session)"
}

// cpuRoles are the processes a call's CPU is split among, in path order.
var cpuRoles = []string{roleLoad, roleGateway, roleExecutor, roleUpstream}

// cpuTotal is the CPU a request costs every process on its path.
func cpuTotal(o outcome) time.Duration {
	var t time.Duration
	for _, r := range cpuRoles {
		t += o.cpuPerCall(r)
	}
	return t
}

// cpuBreakdown shows the CPU per request of each process on the path and
// their sum, e.g. "load generator 14 + upstream 72 = 86 µs".
func cpuBreakdown(o outcome) string {
	var parts []string
	for _, r := range cpuRoles {
		if _, ok := o.cpu[r]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", r, o.cpuPerCall(r).Microseconds()))
		}
	}
	return fmt.Sprintf("%s = %d µs", strings.Join(parts, " + "), cpuTotal(o).Microseconds())
}

func callLabel(e mcpclient.Era) string {
	if e == sseEra {
		return "legacy session declaring roots, after a call that sent it a progress notification (the bare server answers over SSE from then on)"
	}
	return string(e)
}

func (r *report) rows() []row {
	var rows []row
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern} {
		res := r.list[e]
		if res == nil {
			continue
		}
		b, g := res["bare"], res["gateway"]
		ratio := g.meanRPS() / b.meanRPS()
		result := passMiss(ratio >= targetListRatio)
		if b.errors+g.errors > 0 {
			result = fmt.Sprintf("**%d errors**", b.errors+g.errors)
		}
		rows = append(rows,
			row{"1", "tools/list c" + fmt.Sprint(r.o.concurrency) + ", " + eraLabel(e), "bare mcp-go " + rate(b.meanRPS()), rate(g.meanRPS()), fmt.Sprintf("**%.2fx**", ratio), fmt.Sprintf("≥ %.0fx", targetListRatio), result},
			row{"1", "tools/list sequential p50 / p99, " + string(e), us(b.latency.p50) + " / " + us(b.latency.p99), us(g.latency.p50) + " / " + us(g.latency.p99), fmt.Sprintf("%+d µs", (g.latency.p50 - b.latency.p50).Microseconds()), "", ""},
		)
	}
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern, sseEra} {
		res := r.call[e]
		if res == nil {
			continue
		}
		d := res["direct"]
		for _, k := range []struct {
			name   string
			label  string
			ratio  float64
			delta  time.Duration
			target string
		}{
			{"process", "plugin process", targetCallRatioProc, targetCallDeltaProc, ""},
			{"inprocess", "isolation: inprocess", targetCallRatioInP, targetCallDeltaInP, ""},
		} {
			g := res[k.name]
			ratio := g.meanRPS() / d.meanRPS()
			delta := g.latency.p50 - d.latency.p50
			result := passMiss(ratio >= k.ratio)
			if d.errors+g.errors > 0 {
				result = fmt.Sprintf("**%d errors**", d.errors+g.errors)
			}
			rows = append(rows,
				row{"2", fmt.Sprintf("tools/call c%d, %s, %s", r.o.concurrency, callLabel(e), k.label), "direct " + rate(d.meanRPS()), rate(g.meanRPS()), fmt.Sprintf("**%.2fx**", ratio), fmt.Sprintf("≥ %.2fx", k.ratio), result},
				row{"2", fmt.Sprintf("tools/call sequential p50 (p99), %s, %s", callLabel(e), k.label), fmt.Sprintf("%s (%s)", us(d.latency.p50), us(d.latency.p99)), fmt.Sprintf("%s (%s)", us(g.latency.p50), us(g.latency.p99)), fmt.Sprintf("**%+d µs**", delta.Microseconds()), fmt.Sprintf("≤ +%d µs", k.delta.Microseconds()), passMiss(delta <= k.delta)},
			)
		}
		if p, i := res["process"], res["inprocess"]; d.calls > 0 && p.calls > 0 && i.calls > 0 {
			td, tp, ti := cpuTotal(*d), cpuTotal(*p), cpuTotal(*i)
			rows = append(rows, row{"2", fmt.Sprintf("CPU per tools/call at c%d, %s: load generator + upstream (+ gateway + executor), what the 2 cores divide among", r.o.concurrency, callLabel(e)),
				"direct " + cpuBreakdown(*d), "plugin process " + cpuBreakdown(*p) + "; inprocess " + cpuBreakdown(*i),
				fmt.Sprintf("%.2fx / %.2fx", float64(tp)/float64(td), float64(ti)/float64(td)), "", ""})
		}
		if p, s := res["process"], res["stream"]; p != nil && s != nil && p.meanRPS() > 0 {
			cpuP, cpuS := "", ""
			if p.calls > 0 && s.calls > 0 {
				cpuP, cpuS = "; CPU "+cpuBreakdown(*p), "; CPU "+cpuBreakdown(*s)
			}
			rows = append(rows, row{"2", fmt.Sprintf("tools/call c%d and sequential p50, %s, plugin process: calls on the executor's side channel (protocol 3, the default) vs the gRPC Calls stream (`SKILLGATE_EXECUTOR_PROTOCOL=2`)", r.o.concurrency, callLabel(e)),
				fmt.Sprintf("stream %s, %s%s", rate(s.meanRPS()), us(s.latency.p50), cpuS), fmt.Sprintf("side channel %s, %s%s", rate(p.meanRPS()), us(p.latency.p50), cpuP),
				fmt.Sprintf("**%.2fx**, %+d µs", p.meanRPS()/s.meanRPS(), (p.latency.p50 - s.latency.p50).Microseconds()), "", ""})
		}
	}
	if r.coldStart.n > 0 {
		over := r.coldStart.p50 - r.upstreamStart.p50
		rows = append(rows, row{"3", fmt.Sprintf("cold start: exec `skillgate run` to first full tools/list, median of %d", r.coldStart.n),
			"upstream alone " + ms(r.upstreamStart.p50), ms(r.coldStart.p50) + fmt.Sprintf(" (p90 %s)", ms(r.coldStart.p90)), "**+" + ms(over) + "**", "≤ +30 ms", passMiss(over <= targetColdOverUp)})
		if c := r.coldStartInproc; c.n > 0 {
			over := c.p50 - r.upstreamStart.p50
			rows = append(rows, row{"3", fmt.Sprintf("cold start, isolation: inprocess (no executor process), median of %d", c.n),
				"upstream alone " + ms(r.upstreamStart.p50), ms(c.p50) + fmt.Sprintf(" (p90 %s)", ms(c.p90)), "**+" + ms(over) + "**", "≤ +30 ms", passMiss(over <= targetColdOverUp)})
		}
	}
	if r.pluginStart.n > 0 {
		rows = append(rows, row{"4", fmt.Sprintf("mcp executor plugin start (host.Start: exec, handshake, Info), p50 / p90, %d runs", r.pluginStart.n),
			"", ms(r.pluginStart.p50) + " / " + ms(r.pluginStart.p90), "", "", ""})
	}
	for _, iso := range []string{"process", "inprocess"} {
		res, ok := r.rss[iso]
		if !ok {
			continue
		}
		label := "plugin process"
		if iso == "inprocess" {
			label = "isolation: inprocess"
		}
		rows = append(rows, row{"5", fmt.Sprintf("RSS of gateway + executors (%d processes), 10 upstreams, 1,000 tools, %s: peak under load (after start)", res.procs, label),
			"", fmt.Sprintf("%.1f MiB (%.1f MiB); gateway process %.1f (%.1f); summed PSS %.1f (%.1f)",
				mib(res.peak), mib(res.idle), mib(res.peakGW), mib(res.idleGW), mib(res.peakPSS), mib(res.idlePSS)),
			"", fmt.Sprintf("≤ %.0f MiB", targetRSSMiB), passMiss(mib(res.peak) <= targetRSSMiB)})
		if res.sseCalls > 0 {
			per := float64(res.sseGrowth) * 1024 / float64(res.sseCalls)
			rows = append(rows, row{"5", fmt.Sprintf("RSS growth while a legacy session declaring roots, sent a progress notification, makes %s calls, %s", commas(res.sseCalls), label),
				"", fmt.Sprintf("%+.1f MiB (%.0f bytes per call)", mib(res.sseGrowth), per), "", "no growth", passMiss(per < 512)})
		}
	}
	return append(append(rows, r.disclosureRows()...), r.skillsRows()...)
}

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", beginMarker)
	fmt.Fprintf(&b, "Run %s with:\n\n    %s\n\n", r.started.Format("2006-01-02 15:04 MST"), r.command())
	for _, e := range r.env {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	b.WriteString("\n| # | measurement | baseline | skillgate | ratio / delta | target | result |\n|---|---|---|---|---|---|---|\n")
	for _, x := range r.rows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", x.id, x.what, x.base, x.subject, x.ratio, x.target, x.result)
	}
	var raw []string
	for _, e := range []mcpclient.Era{mcpclient.Legacy, mcpclient.Modern, sseEra} {
		for _, set := range []struct {
			what string
			res  map[string]*outcome
			keys []string
		}{{"tools/list", r.list[e], []string{"bare", "gateway"}}, {"tools/call", r.call[e], []string{"direct", "process", "inprocess", "stream"}}} {
			if set.res == nil {
				continue
			}
			var parts []string
			for _, k := range set.keys {
				o := set.res[k]
				if o == nil {
					continue
				}
				var rs []string
				for _, v := range o.rps {
					rs = append(rs, commas(int(v+0.5)))
				}
				parts = append(parts, fmt.Sprintf("%s %s (seq n=%d)", k, strings.Join(rs, ", "), o.latency.n))
			}
			raw = append(raw, fmt.Sprintf("%s %s req/s per run: %s", set.what, e, strings.Join(parts, "; ")))
		}
		if sz, ok := r.listBytes[e]; ok {
			raw = append(raw, fmt.Sprintf("tools/list response %s: bare %s bytes, gateway %s bytes", e, commas(sz[0]), commas(sz[1])))
		}
	}
	if len(raw) > 0 {
		b.WriteString("\nPer run (the spread shows the noise):\n\n")
		for _, l := range raw {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	if len(r.notes) > 0 {
		b.WriteString("\n")
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	fmt.Fprintf(&b, "%s", endMarker)
	return b.String()
}

// writeBetweenMarkers replaces what lies between the markers in path.
func writeBetweenMarkers(path, md string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(old, []byte(beginMarker))
	j := bytes.Index(old, []byte(endMarker))
	if i < 0 || j < i {
		return errors.New(path + ": no " + beginMarker + " ... " + endMarker + " block to replace")
	}
	var out bytes.Buffer
	out.Write(old[:i])
	out.WriteString(md)
	out.Write(old[j+len(endMarker):])
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
