package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// coldStart times `skillgate run` from exec to the first tools/list with
// every tool, and the upstream alone from exec to its tools/list answer.
func (b *bench) coldStart(ctx context.Context) error {
	logf("cold start: %d runs each of the upstream alone and the gateway", b.o.coldRuns)
	var ups []time.Duration
	for i := range b.o.coldRuns + 1 {
		d, err := upstreamStart(ctx, b.up, b.o.tools)
		if err != nil {
			return fmt.Errorf("upstream alone: %w", err)
		}
		if i > 0 {
			ups = append(ups, d)
		}
	}
	gws, err := b.gatewayStarts(ctx, "cold", "")
	if err != nil {
		return err
	}
	inproc, err := b.gatewayStarts(ctx, "cold-inprocess", "inprocess")
	if err != nil {
		return err
	}
	b.rep.upstreamStart = summarize(ups)
	b.rep.coldStart = summarize(gws)
	b.rep.coldStartInproc = summarize(inproc)
	return nil
}

// gatewayStarts times coldRuns starts (after a warm-up) of `skillgate run`
// with one upstream whose executor runs with isolation.
func (b *bench) gatewayStarts(ctx context.Context, name, isolation string) ([]time.Duration, error) {
	cfg, err := b.writeConfig(name, 1, b.o.tools, isolation)
	if err != nil {
		return nil, err
	}
	var gws []time.Duration
	for i := range b.o.coldRuns + 1 {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		t0 := time.Now()
		p, err := startProc(b.dir, name, b.sg, "run", "-c", cfg, "--listen", addr)
		if err != nil {
			cancel()
			return nil, err
		}
		err = waitTools(sctx, "http://"+addr+"/mcp", b.o.tools, p.done)
		d := time.Since(t0)
		cancel()
		if serr := p.stop(); err == nil {
			err = serr
		}
		if err != nil {
			return nil, fmt.Errorf("gateway (%s): %w (log: %s)", name, err, p.log)
		}
		if i > 0 {
			gws = append(gws, d)
		}
	}
	return gws, nil
}

// upstreamStart runs the upstream over stdio and times exec to the answer
// of its tools/list (after initialize), the part of a gateway's cold start
// the upstream itself is responsible for.
func upstreamStart(ctx context.Context, bin string, tools int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-transport", "stdio", "-tools", strconv.Itoa(tools))
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	msgs := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"skillbench","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	if _, err := io.WriteString(in, msgs); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("upstream closed stdout before answering tools/list: %w", err)
		}
		if strings.Contains(line, `"id":2`) {
			if n := strings.Count(line, `"inputSchema"`); n != tools {
				return 0, fmt.Errorf("upstream listed %d tools, want %d", n, tools)
			}
			return time.Since(t0), nil
		}
	}
}
