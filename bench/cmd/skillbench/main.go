// Command skillbench measures skillgate against baselines measured in the
// same run and prints a markdown table (docs/PERFORMANCE.md holds the
// latest one). Run it from the repository root:
//
//	go run ./bench/cmd/skillbench                              # print the table
//	go run ./bench/cmd/skillbench -write docs/PERFORMANCE.md   # and store it
//	go run ./bench/cmd/skillbench -profile /tmp/prof           # plus CPU profiles
//
// It builds skillgate and the benchmark upstream (bench/upstream) into a
// temporary folder, starts everything on 127.0.0.1, drives load with wrk
// (or hey) for a bounded time, and stops every process it started.
//
// What it compares:
//
//  1. tools/list through the gateway vs a bare mcp-go streamable HTTP server
//     with the same tools, legacy era (session) and modern era (stateless);
//  2. tools/call of echo through the gateway (front end -> mcp executor
//     plugin process -> stdio upstream; and with isolation: inprocess) vs the
//     same upstream served over streamable HTTP and called directly;
//  3. cold start of `skillgate run` to its first full tools/list, minus the
//     upstream's own start;
//  4. start of the mcp executor plugin (host.Start, which waits for Info);
//  5. RSS of the gateway and its executors with 10 upstreams, 1,000 tools;
//  6. progressive disclosure (disclosure.go);
//  7. skills: skills/list, find_skills and load_skill against the same
//     gateway's tools/list (skills.go).
//
// Throughput runs are repeated in alternating order (A B C, then C B A) so
// that drift on a noisy machine hits baseline and gateway alike.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/plugins/host"
)

type options struct {
	duration    time.Duration
	rounds      int
	concurrency int
	threads     int
	seqN        int
	seqDur      time.Duration
	coldRuns    int
	pluginRuns  int
	tools       int
	loadgen     string
	write       string
	profile     string
	only        string
	keep        bool
	timeout     time.Duration
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "d", 5*time.Second, "duration of each load run")
	flag.IntVar(&o.rounds, "rounds", 2, "load runs per case, in alternating order")
	flag.IntVar(&o.concurrency, "c", 16, "connections of the load generator")
	flag.IntVar(&o.threads, "t", 2, "wrk threads")
	flag.IntVar(&o.seqN, "seq", 3000, "most requests of a sequential latency run")
	flag.DurationVar(&o.seqDur, "seq-d", 2*time.Second, "longest sequential latency run")
	flag.IntVar(&o.coldRuns, "cold", 10, "cold starts to time (after one warm-up)")
	flag.IntVar(&o.pluginRuns, "plugin", 20, "plugin starts to time (after one warm-up)")
	flag.IntVar(&o.tools, "tools", 51, "tools of the upstream for the list and call comparisons")
	flag.StringVar(&o.loadgen, "loadgen", "", "wrk or hey (default: wrk if installed, else hey)")
	flag.StringVar(&o.write, "write", "", "also write the report into this file between the bench markers")
	flag.StringVar(&o.profile, "profile", "", "also take CPU profiles of the proxied call path into this folder")
	flag.StringVar(&o.only, "only", "", "comma-separated subset: plugin,cold,list,call,rss,disclosure,skills (default all)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (binaries, configs, logs)")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "bound on the whole run")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "skillbench:", err)
		os.Exit(1)
	}
}

// bench is one run's state.
type bench struct {
	o    options
	dir  string
	root string
	sg   string // skillgate binary
	up   string // upstream binary
	lg   *loadgen
	rep  *report
}

func run(o options) error {
	if err := platformSupported(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if o.loadgen == "" {
		o.loadgen = "wrk"
		if _, err := exec.LookPath("wrk"); err != nil {
			o.loadgen = "hey"
		}
	}
	if _, err := exec.LookPath(o.loadgen); err != nil {
		return fmt.Errorf("%s not found: install wrk or hey (bash scripts/test-deps.sh --bench)", o.loadgen)
	}
	dir, err := os.MkdirTemp("", "skillbench-")
	if err != nil {
		return err
	}
	if o.keep {
		logf("keeping %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	b := &bench{o: o, dir: dir, root: root, rep: newReport(o)}
	b.lg = &loadgen{tool: o.loadgen, dir: dir, concurrency: o.concurrency, threads: o.threads}
	if err := b.build(ctx); err != nil {
		return err
	}
	b.rep.machine(ctx, root, o.loadgen)

	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"plugin", b.pluginStart},
		{"cold", b.coldStart},
		{"list", b.listAndCall}, // list and call share their processes
		{"rss", b.rss},
		{"disclosure", b.disclosure},
		{"skills", b.skills},
	}
	var errs []error
	for _, s := range steps {
		if !b.want(s.name) && !(s.name == "list" && b.want("call")) {
			continue
		}
		if err := s.fn(ctx); err != nil {
			logf("%s: %v", s.name, err)
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
			b.rep.note("**%s failed:** %v", s.name, err)
		}
	}
	if o.profile != "" {
		if err := b.profiles(ctx); err != nil {
			errs = append(errs, fmt.Errorf("profile: %w", err))
		}
	}
	md := b.rep.markdown()
	fmt.Println(md)
	if o.write != "" {
		if err := writeBetweenMarkers(o.write, md); err != nil {
			errs = append(errs, err)
		} else {
			logf("wrote %s", o.write)
		}
	}
	return errors.Join(errs...)
}

func (b *bench) want(step string) bool {
	if b.o.only == "" {
		return true
	}
	for _, s := range strings.Split(b.o.only, ",") {
		if strings.TrimSpace(s) == step {
			return true
		}
	}
	return false
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "skillbench: "+format+"\n", args...)
}

// moduleRoot finds the skillgate module's folder from the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run skillbench from the skillgate repository")
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(data), "module github.com/skillgate/skillgate\n") {
		return "", fmt.Errorf("%s is not skillgate's go.mod; run from the repository root", gomod)
	}
	return filepath.Dir(gomod), nil
}

// build compiles skillgate and the upstream into the temporary folder,
// the way `make build` does (plain go build).
func (b *bench) build(ctx context.Context) error {
	b.sg = filepath.Join(b.dir, "skillgate")
	b.up = filepath.Join(b.dir, "upstream")
	for _, t := range []struct{ out, pkg string }{{b.sg, "./cmd/skillgate"}, {b.up, "./bench/upstream"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", t.out, t.pkg)
		cmd.Dir = b.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", t.pkg, err, out)
		}
	}
	logf("built skillgate and upstream into %s", b.dir)
	return nil
}

// writeConfig writes a skillgate.yaml serving n stdio upstreams of tools
// tools each, named s0.. (or "up" when n is 1).
func (b *bench) writeConfig(name string, n, tools int, isolation string) (string, error) {
	var s strings.Builder
	s.WriteString("servers:\n")
	for i := range n {
		key := fmt.Sprintf("s%d", i)
		if n == 1 {
			key = "up"
		}
		fmt.Fprintf(&s, "  %s:\n    command: %q\n    args: [\"-transport\", \"stdio\", \"-tools\", \"%d\"]\n", key, b.up, tools)
		if isolation != "" {
			fmt.Fprintf(&s, "    isolation: %s\n", isolation)
		}
	}
	path := filepath.Join(b.dir, name+".yaml")
	return path, os.WriteFile(path, []byte(s.String()), 0o644)
}

// pluginStart times host.Start of the mcp executor: process start,
// go-plugin handshake and Info.
func (b *bench) pluginStart(ctx context.Context) error {
	logf("plugin start: %d runs", b.o.pluginRuns)
	opts := host.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	spec := host.Spec{Name: "mcp", Path: b.sg, Args: []string{"plugin", "serve", "mcp"}}
	var samples []time.Duration
	for i := range b.o.pluginRuns + 1 {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		t0 := time.Now()
		p, err := host.Start(sctx, spec, opts)
		d := time.Since(t0)
		cancel()
		if err != nil {
			return err
		}
		pid := p.Status().PID
		if err := p.Close(); err != nil {
			return err
		}
		for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if i > 0 {
			samples = append(samples, d)
		}
	}
	b.rep.pluginStart = summarize(samples)
	return nil
}
