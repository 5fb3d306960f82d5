package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// Targets from the disclosure issue.
const (
	targetFindP99      = time.Millisecond
	targetProgressiveT = 2000
)

// disclosureResult is what the disclosure step measured.
type disclosureResult struct {
	tools               int
	all, progressive    disclosure.EndpointStats
	findInProc          latency // find_tools logic in process, 1,000 tools
	findHTTP            latency // find_tools over HTTP, legacy session
	activate            latency // activate + deactivate of one server over HTTP, each
	progressiveListHTTP latency // tools/list of a session that activated a server
}

// disclosure serves 10 upstreams of 100 tools with the default endpoint in
// "all" mode and a progressive profile, and measures what each lists, find
// over the catalog (in process and over HTTP) and activation round trips.
func (b *bench) disclosure(ctx context.Context) error {
	const servers, tools = 10, 100
	var s strings.Builder
	s.WriteString("profiles:\n  prog: {disclosure: progressive}\nservers:\n")
	for i := range servers {
		fmt.Fprintf(&s, "  s%d:\n    command: %q\n    args: [\"-transport\", \"stdio\", \"-tools\", \"%d\"]\n", i, b.up, tools)
	}
	cfg := filepath.Join(b.dir, "disclosure.yaml")
	if err := os.WriteFile(cfg, []byte(s.String()), 0o644); err != nil {
		return err
	}
	gw, err := startGateway(ctx, b.dir, "gw-disclosure", b.sg, cfg, servers*tools)
	if err != nil {
		return err
	}
	defer stopLogged(gw.proc)
	res := &disclosureResult{tools: servers * tools}
	c := mcpclient.NewClient(10 * time.Second)
	defer c.CloseIdleConnections()

	// What each endpoint lists, from /stats.
	base := strings.TrimSuffix(gw.url, "/mcp")
	st, err := fetchStats(ctx, c, base+"/stats")
	if err != nil {
		return err
	}
	for _, e := range st {
		switch e.Endpoint {
		case "/mcp":
			res.all = e
		case "/mcp/p/prog":
			res.progressive = e
		}
	}

	// find in process, over the gateway's own catalog.
	ep, err := mcpclient.Connect(ctx, c, gw.url, mcpclient.Legacy)
	if err != nil {
		return err
	}
	body, _, err := ep.ListRequest().Do(ctx, c)
	if err != nil {
		return err
	}
	raw, err := mcpclient.Result(body)
	if err != nil {
		return err
	}
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	snap := catalog.Build([]catalog.Source{{ID: "gw", Defs: sdk.Definitions{Tools: list.Tools}}}, catalog.Options{Reserved: disclosure.Names})
	d := disclosure.New(disclosure.Options{Mode: disclosure.ModeProgressive})
	queries := []string{"read a file", "line range of a file", "echo the message", "tool 517", "report progress", "decode base64 file contents", "s3 tool 42"}
	d.Find(snap, disclosure.Request{}, "warm up", "", 10)
	var samples []time.Duration
	for i := 0; i < 20000; i++ {
		t0 := time.Now()
		d.Find(snap, disclosure.Request{}, queries[i%len(queries)], "", 10)
		samples = append(samples, time.Since(t0))
	}
	res.findInProc = summarize(samples)

	// find over HTTP, on a legacy session (the fast path).
	find := ep.NewRequest(9, "tools/call", map[string]any{"name": "find_tools", "arguments": map[string]any{"query": "read a line range of a file"}}, "find_tools")
	seq, err := sequential(ctx, find, b.o.seqN, b.o.seqDur)
	if err != nil {
		return fmt.Errorf("find_tools: %w", err)
	}
	res.findHTTP = summarize(seq)

	// Activation round trips on a progressive session: activate s3, then
	// deactivate it, each timed; then the session's list with s3 active.
	pep, err := mcpclient.Connect(ctx, c, base+"/mcp/p/prog", mcpclient.Legacy)
	if err != nil {
		return err
	}
	act := pep.NewRequest(11, "tools/call", map[string]any{"name": "activate", "arguments": map[string]any{"targets": []string{"s3"}}}, "activate")
	deact := pep.NewRequest(12, "tools/call", map[string]any{"name": "deactivate", "arguments": map[string]any{"targets": []string{"s3"}}}, "deactivate")
	samples = samples[:0]
	end := time.Now().Add(b.o.seqDur)
	for i := 0; i < b.o.seqN && time.Now().Before(end); i++ {
		for _, r := range []mcpclient.Request{act, deact} {
			t0 := time.Now()
			if _, err := checked(ctx, c, r); err != nil {
				return fmt.Errorf("activation: %w", err)
			}
			samples = append(samples, time.Since(t0))
		}
	}
	res.activate = summarize(samples)
	if _, err := checked(ctx, c, act); err != nil {
		return err
	}
	seq, err = sequential(ctx, pep.ListRequest(), b.o.seqN, b.o.seqDur)
	if err != nil {
		return fmt.Errorf("session tools/list: %w", err)
	}
	res.progressiveListHTTP = summarize(seq)
	b.rep.disclosure = res
	logf("disclosure: all %d tokens, progressive %d tokens; find p50 %s p99 %s in process; activate p50 %s",
		res.all.Tokens, res.progressive.Tokens, res.findInProc.p50, res.findInProc.p99, res.activate.p50)
	return nil
}

func fetchStats(ctx context.Context, c *http.Client, url string) ([]disclosure.EndpointStats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var st struct {
		Endpoints []disclosure.EndpointStats `json:"endpoints"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("/stats: %w: %.200s", err, b)
	}
	return st.Endpoints, nil
}

func (r *report) disclosureRows() []row {
	d := r.disclosure
	if d == nil {
		return nil
	}
	return []row{
		{"6", fmt.Sprintf("tools/list of a new client, %s tools from 10 upstreams: `disclosure: all` vs a `progressive` profile (5 meta-tools, nothing pinned)", commas(d.tools)),
			fmt.Sprintf("all: %d tools, %s bytes, ~%s tokens", d.all.Listed, commas(d.all.Bytes), commas(d.all.Tokens)),
			fmt.Sprintf("progressive: %d tools, %s bytes, ~%s tokens", d.progressive.Listed, commas(d.progressive.Bytes), commas(d.progressive.Tokens)),
			fmt.Sprintf("**%.1f%%**", 100*float64(d.progressive.Tokens)/float64(d.all.Tokens)), fmt.Sprintf("≤ %s tokens", commas(targetProgressiveT)), passMiss(d.progressive.Tokens <= targetProgressiveT)},
		{"6", fmt.Sprintf("find_tools ranking in process over %s tools, p50 / p99 (%s queries)", commas(d.tools), commas(d.findInProc.n)),
			"", us(d.findInProc.p50) + " / " + us(d.findInProc.p99), "", "p99 ≤ 1 ms", passMiss(d.findInProc.p99 <= targetFindP99)},
		{"6", "find_tools over HTTP, legacy session, sequential p50 / p99", "", us(d.findHTTP.p50) + " / " + us(d.findHTTP.p99), "", "", ""},
		{"6", fmt.Sprintf("activate / deactivate of a 100-tool server over HTTP, legacy session, sequential p50 / p99 (%d round trips)", d.activate.n),
			"", us(d.activate.p50) + " / " + us(d.activate.p99), "", "", ""},
		{"6", "tools/list of that session with the server active (list computed once per activation, then cached), p50 / p99",
			"", us(d.progressiveListHTTP.p50) + " / " + us(d.progressiveListHTTP.p99), "", "", ""},
	}
}
