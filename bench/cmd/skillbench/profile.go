package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/bench/internal/mcpclient"
)

// profiles builds profgate (skillgate's run and plugin serve with pprof),
// drives tools/call and tools/list through it, and stores CPU profiles of
// the gateway and its executor in o.profile, with `go tool pprof -top`
// summaries next to them.
func (b *bench) profiles(ctx context.Context) error {
	out, err := filepath.Abs(b.o.profile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	pg := filepath.Join(b.dir, "prof", "profgate")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", pg, "./bench/cmd/profgate")
	cmd.Dir = b.root
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./bench/cmd/profgate: %w\n%s", err, o)
	}
	secs := max(int(b.o.duration/time.Second), 3)
	for _, iso := range []string{"process", "inprocess"} {
		isolation := iso
		if iso == "process" {
			isolation = ""
		}
		cfg, err := b.writeConfig("prof-"+iso, 1, b.o.tools, isolation)
		if err != nil {
			return err
		}
		gw, err := startGateway(ctx, b.dir, "prof-"+iso, pg, cfg, b.o.tools)
		if err != nil {
			return err
		}
		time.Sleep(time.Second) // start-up notifications would switch the session to SSE
		err = b.profileOne(ctx, gw, pg, iso, out, secs)
		if serr := gw.stop(); err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
	}
	logf("profiles in %s (go tool pprof -http 127.0.0.1:0 FILE to browse)", out)
	return nil
}

func (b *bench) profileOne(ctx context.Context, gw *gateway, bin, iso, out string, secs int) error {
	targets := map[string]string{} // role -> pprof address
	addrOf := func(role string, pid int) (string, error) {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(bin), fmt.Sprintf("pprof-%s-%d.addr", role, pid)))
		return string(data), err
	}
	a, err := addrOf("gateway", gw.pid())
	if err != nil {
		return err
	}
	targets["gateway"] = a
	if iso == "process" {
		for _, d := range descendants(gw.pid()) {
			if a, err := addrOf("executor-mcp", d); err == nil {
				targets["executor"] = a
			}
		}
		if targets["executor"] == "" {
			return fmt.Errorf("no pprof address of the mcp executor below pid %d", gw.pid())
		}
	}
	c := mcpclient.NewClient(10 * time.Second)
	defer c.CloseIdleConnections()
	ep, err := mcpclient.Connect(ctx, c, gw.url, mcpclient.Legacy)
	if err != nil {
		return err
	}
	type load struct {
		name string
		req  mcpclient.Request
	}
	loads := []load{{"call", ep.CallRequest("up__echo")}}
	if iso == "process" {
		sse, err := mcpclient.ConnectWith(ctx, c, gw.url, mcpclient.Legacy, rootsClient)
		if err != nil {
			return err
		}
		if _, err := mcpclient.SendProgress(ctx, c, sse, "up__progress"); err != nil {
			return err
		}
		loads = append(loads, load{"list", ep.ListRequest()}, load{"call-sse", sse.CallRequest("up__echo")})
	}
	for _, l := range loads {
		var wg sync.WaitGroup
		var loadErr error
		var t throughput
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, loadErr = b.lg.run(ctx, time.Duration(secs+2)*time.Second, l.req)
		}()
		time.Sleep(time.Second)
		var perr []error
		var mu sync.Mutex
		for role, addr := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				file := filepath.Join(out, fmt.Sprintf("%s-%s-%s.pprof", l.name, iso, role))
				if err := fetchProfile(ctx, addr, secs, file); err != nil {
					mu.Lock()
					perr = append(perr, fmt.Errorf("%s: %w", role, err))
					mu.Unlock()
					return
				}
				for _, mode := range []string{"flat", "cum"} {
					args := []string{"tool", "pprof", "-top", "-nodecount=40"}
					if mode == "cum" {
						args = append(args, "-cum")
					}
					txt, err := exec.CommandContext(ctx, "go", append(args, file)...).CombinedOutput()
					if err == nil {
						err = os.WriteFile(strings.TrimSuffix(file, ".pprof")+"-"+mode+".txt", txt, 0o644)
					}
					if err != nil {
						mu.Lock()
						perr = append(perr, err)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if loadErr != nil {
			return loadErr
		}
		if len(perr) > 0 {
			return perr[0]
		}
		logf("profiled %s (%s): %.0f req/s under the profiler", l.name, iso, t.rps)
	}
	return nil
}

func fetchProfile(ctx context.Context, addr string, secs int, file string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs+20)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
