package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
)

// loadgen drives concurrent traffic with an external load generator, so
// that its cost is the same for baseline and gateway and outside both.
type loadgen struct {
	tool        string // "wrk" or "hey"
	dir         string
	concurrency int
	threads     int
	seq         int // scripts written, for unique names
}

// throughput is one load run's outcome.
type throughput struct {
	rps      float64
	errors   int           // non-2xx responses and socket errors
	requests int           // completed in the run
	cpu      time.Duration // the load generator's own CPU time
}

var (
	reRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reWrkN    = regexp.MustCompile(`(\d+) requests in`)
	reNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	reSockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	reHeyCode = regexp.MustCompile(`\[(\d{3})\]\s+(\d+) responses`)
	reHeyErr  = regexp.MustCompile(`(?m)^\s+\[(\d+)\]\s`)
)

// run sends reqs (round robin) to their URL for d.
func (l *loadgen) run(ctx context.Context, d time.Duration, reqs ...mcpclient.Request) (throughput, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	r := reqs[0]
	var cmd *exec.Cmd
	switch l.tool {
	case "wrk":
		l.seq++
		script := filepath.Join(l.dir, fmt.Sprintf("wrk-%d.lua", l.seq))
		if err := os.WriteFile(script, wrkScript(reqs), 0o644); err != nil {
			return throughput{}, err
		}
		cmd = exec.CommandContext(ctx, "wrk", "-t", strconv.Itoa(l.threads), "-c", strconv.Itoa(l.concurrency),
			"-d", fmt.Sprintf("%.0fs", d.Seconds()), "--timeout", "10s", "-s", script, r.URL)
	case "hey":
		if len(reqs) > 1 {
			return throughput{}, fmt.Errorf("hey sends one request body; use wrk for a mix")
		}
		args := []string{"-z", d.String(), "-c", strconv.Itoa(l.concurrency), "-m", "POST", "-d", string(r.Body)}
		for k, v := range r.Headers {
			if k == "Content-Type" {
				args = append(args, "-T", v)
				continue
			}
			args = append(args, "-H", k+": "+v)
		}
		cmd = exec.CommandContext(ctx, "hey", append(args, r.URL)...)
	default:
		return throughput{}, fmt.Errorf("unknown load generator %q", l.tool)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return throughput{}, fmt.Errorf("%s: %w\n%s", l.tool, err, out)
	}
	m := reRPS.FindSubmatch(out)
	if m == nil {
		return throughput{}, fmt.Errorf("%s: no Requests/sec in output:\n%s", l.tool, out)
	}
	var t throughput
	t.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	if t.rps == 0 {
		return throughput{}, fmt.Errorf("%s: no request completed:\n%s", l.tool, out)
	}
	t.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	t.requests = int(t.rps * d.Seconds())
	switch l.tool {
	case "wrk":
		if m := reWrkN.FindSubmatch(out); m != nil {
			t.requests, _ = strconv.Atoi(string(m[1]))
		}
		if m := reNon2xx.FindSubmatch(out); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			t.errors += n
		}
		if m := reSockErr.FindSubmatch(out); m != nil {
			for _, s := range m[1:] {
				n, _ := strconv.Atoi(string(s))
				t.errors += n
			}
		}
	case "hey":
		for _, m := range reHeyCode.FindAllSubmatch(out, -1) {
			if m[1][0] != '2' {
				n, _ := strconv.Atoi(string(m[2]))
				t.errors += n
			}
		}
		if i := bytes.Index(out, []byte("Error distribution:")); i >= 0 {
			for _, m := range reHeyErr.FindAllSubmatch(out[i:], -1) {
				n, _ := strconv.Atoi(string(m[1]))
				t.errors += n
			}
		}
	}
	return t, nil
}

// wrkScript is a wrk Lua script POSTing reqs in turn (all to one URL).
func wrkScript(reqs []mcpclient.Request) []byte {
	var b strings.Builder
	b.WriteString("wrk.method = \"POST\"\n")
	lua := func(s string) string { return "[==[" + s + "]==]" }
	hdrs := func(h map[string]string) string {
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var s strings.Builder
		s.WriteString("{")
		for _, k := range keys {
			fmt.Fprintf(&s, "[ %s ] = %s, ", lua(k), lua(h[k]))
		}
		s.WriteString("}")
		return s.String()
	}
	if len(reqs) == 1 {
		fmt.Fprintf(&b, "wrk.body = %s\n", lua(string(reqs[0].Body)))
		fmt.Fprintf(&b, "wrk.headers = %s\n", hdrs(reqs[0].Headers))
		return []byte(b.String())
	}
	b.WriteString("local reqs = {}\n")
	b.WriteString("init = function(args)\n")
	for i, r := range reqs {
		fmt.Fprintf(&b, "  reqs[%d] = wrk.format(\"POST\", nil, %s, %s)\n", i+1, hdrs(r.Headers), lua(string(r.Body)))
	}
	b.WriteString("end\nlocal i = 0\nrequest = function()\n  i = i % #reqs + 1\n  return reqs[i]\nend\n")
	return []byte(b.String())
}

// latency is a sequential client's outcome.
type latency struct {
	n             int
	p50, p90, p99 time.Duration
}

// sequential sends r one at a time over one kept-alive connection: a
// warm-up, then at most n requests or d, whichever ends first, and returns
// each request's time. Every response must carry a result.
func sequential(ctx context.Context, r mcpclient.Request, n int, d time.Duration) ([]time.Duration, error) {
	c := mcpclient.NewClient(10 * time.Second)
	defer c.CloseIdleConnections()
	for range 50 {
		if _, err := checked(ctx, c, r); err != nil {
			return nil, err
		}
	}
	samples := make([]time.Duration, 0, n)
	end := time.Now().Add(d)
	for len(samples) < n && time.Now().Before(end) {
		t0 := time.Now()
		if _, err := checked(ctx, c, r); err != nil {
			return nil, err
		}
		samples = append(samples, time.Since(t0))
	}
	return samples, nil
}

func checked(ctx context.Context, c *http.Client, r mcpclient.Request) ([]byte, error) {
	body, _, err := r.Do(ctx, c)
	if err != nil {
		return nil, err
	}
	return body, mcpclient.Check(body)
}

func summarize(s []time.Duration) latency {
	if len(s) == 0 {
		return latency{}
	}
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return latency{n: len(s), p50: q(0.50), p90: q(0.90), p99: q(0.99)}
}
