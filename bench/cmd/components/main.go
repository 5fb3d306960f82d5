// Command components runs the Go benchmarks of skillgate's components
// (disclosure, pipelines, the script and wasm executors, services, skills)
// and prints a markdown table of their results next to the targets the
// issues set, each ratio against a baseline measured in the same run.
//
//	go run ./bench/cmd/components                                # print the table
//	go run ./bench/cmd/components -write docs/PERFORMANCE.md     # and store it there
//	go run ./bench/cmd/components -count 5 -only pipelines       # more runs, one component
//
// Every benchmark runs -count times (default 3); the median of each metric
// is reported. Numbers move with machine load: compare ratios, and rerun
// on a quiet machine before quoting absolute values.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	beginMarker = "<!-- components:begin -->"
	endMarker   = "<!-- components:end -->"
)

// run is one `go test -bench` invocation.
type run struct {
	component string
	pkg       string
	bench     string // -bench regexp
	benchtime string
	needs     string // a command that must be on PATH (else the run is skipped)
}

var runs = []run{
	{"disclosure", "./gateway/disclosure", "^(BenchmarkFind1000|BenchmarkActivate)$", "2000x", ""},
	{"pipelines", "./pipelines", "^(BenchmarkDirectCall|BenchmarkOneStep|BenchmarkSequential100|BenchmarkForEach100)$", "2s", ""},
	{"script", "./plugins/script", "^(BenchmarkPerCallPython|BenchmarkBareStartPython|BenchmarkPerCallBash|BenchmarkBareStartBash)$", "20x", "python3"},
	{"script", "./plugins/script", "^BenchmarkPersistent$", "3000x", "python3"},
	{"wasm", "./plugins/wasm", "^(BenchmarkCommandCall|BenchmarkReactorCall|BenchmarkReactorCallGRPC)$", "1s", ""},
	{"services", "./services", "^(BenchmarkEnsureHealthy|BenchmarkDockerEnsureHealthy|BenchmarkDockerColdStart)$", "1s", "docker"},
	{"skills", "./skills", "^(BenchmarkRefreshUnchanged1000|BenchmarkFind|BenchmarkLoadSkill|BenchmarkRunScript)$", "1s", ""},
}

// result holds each metric's values over the -count runs of one benchmark.
type result struct {
	name    string
	metrics map[string][]float64 // unit -> values
	order   []string
}

func (r *result) median(unit string) (float64, bool) {
	v := slices.Clone(r.metrics[unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	return v[len(v)/2], true
}

var (
	lineRE = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(\d.*)$`)
	// A benchmark whose code logs prints its name, the log lines, then
	// the iteration count and metrics on a line of their own.
	nameRE = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s`)
	restRE = regexp.MustCompile(`^\s+\d+\s+(\d.*)$`)
)

// parse reads `go test -bench` output into results by benchmark name.
func parse(out []byte, into map[string]*result, order *[]string) {
	pending := ""
	for _, line := range strings.Split(string(out), "\n") {
		var name, metrics string
		if m := lineRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			name, metrics = m[1], m[3]
		} else if m := restRE.FindStringSubmatch(line); m != nil && pending != "" {
			name, metrics = pending, m[1]
		} else if m := nameRE.FindStringSubmatch(line); m != nil {
			pending = m[1]
			continue
		} else {
			continue
		}
		pending = ""
		r := into[name]
		if r == nil {
			r = &result{name: name, metrics: map[string][]float64{}}
			into[name] = r
			*order = append(*order, name)
		}
		f := strings.Fields(metrics)
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			if _, ok := r.metrics[unit]; !ok {
				r.order = append(r.order, unit)
			}
			r.metrics[unit] = append(r.metrics[unit], v)
		}
	}
}

func main() {
	count := flag.Int("count", 3, "runs of each benchmark; the median is reported")
	write := flag.String("write", "", "also write the table into this file between the components markers")
	only := flag.String("only", "", "comma-separated components to run (default all)")
	flag.Parse()
	if err := mainErr(*count, *write, *only); err != nil {
		fmt.Fprintln(os.Stderr, "components:", err)
		os.Exit(1)
	}
}

func mainErr(count int, write, only string) error {
	results := map[string]*result{}
	var order []string
	component := map[string]string{}
	var skipped []string
	started := time.Now().UTC()
	for _, r := range runs {
		if only != "" && !slices.Contains(strings.Split(only, ","), r.component) {
			continue
		}
		if r.needs != "" {
			if _, err := exec.LookPath(r.needs); err != nil {
				skipped = append(skipped, fmt.Sprintf("%s (%s not installed)", r.component, r.needs))
				continue
			}
		}
		args := []string{"test", "-run", "^$", "-bench", r.bench, "-benchtime", r.benchtime, "-count", strconv.Itoa(count), "-benchmem", r.pkg}
		fmt.Fprintf(os.Stderr, "components: go %s\n", strings.Join(args, " "))
		// Benchmark lines are on stdout; plugins log to stderr, which would
		// split a result line in two.
		cmd := exec.Command("go", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("go %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
		}
		before := len(order)
		parse(out, results, &order)
		for _, n := range order[before:] {
			component[n] = r.component
		}
	}
	md := table(results, order, component, skipped, count, started)
	fmt.Println(md)
	if write != "" {
		return writeBetweenMarkers(write, md)
	}
	return nil
}

// target is what an issue asks of a benchmark, checked on its medians.
type target struct {
	text  string
	check func(get func(bench, unit string) (float64, bool)) (string, bool, bool) // value shown, pass, known
}

func table(results map[string]*result, order []string, component map[string]string, skipped []string, count int, started time.Time) string {
	get := func(bench, unit string) (float64, bool) {
		r := results[bench]
		if r == nil {
			return 0, false
		}
		return r.median(unit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nRun %s with `go run ./bench/cmd/components -count %d` (%d CPUs, %s); medians of %d runs.\n\n",
		beginMarker, started.Format("2006-01-02 15:04 MST"), count, runtime.NumCPU(), runtime.Version(), count)
	b.WriteString("| component | benchmark | result (median) |\n|---|---|---|\n")
	for _, n := range order {
		r := results[n]
		var parts []string
		for _, unit := range r.order {
			v, _ := r.median(unit)
			parts = append(parts, formatMetric(v, unit))
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", component[n], strings.TrimPrefix(n, "Benchmark"), strings.Join(parts, ", "))
	}
	b.WriteString("\nAgainst the issues' targets:\n\n| target | measured | result |\n|---|---|---|\n")
	for _, t := range targets {
		v, pass, known := t.check(get)
		if !known {
			continue
		}
		verdict := map[bool]string{true: "pass", false: "**miss**"}[pass]
		if !strings.Contains(t.text, "≤") && !strings.Contains(t.text, "≥") {
			verdict = "—" // no target: shown for comparison
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.text, v, verdict)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "\nSkipped: %s.\n", strings.Join(skipped, ", "))
	}
	b.WriteString(endMarker)
	return b.String()
}

var targets = []target{
	{"find over 1,000 tools, in process (mean; p99 ≤ 1 ms is in the skillbench table)", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		v, ok := get("BenchmarkFind1000", "ns/op")
		return fmt.Sprintf("%.1f µs", v/1e3), v <= 1e6, ok
	}},
	{"pipeline per-step overhead (binding evaluation + dispatch) ≤ 20 µs: the cost per step of a 100-step sequential chain of fake calls", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		v, ok := get("BenchmarkSequential100", "us/step")
		return fmt.Sprintf("%.1f µs (100-step chain ≤ 1.3x the sum of direct calls: against a ~130 µs real tool call that is +%.0f%%)", v, 100*v/130), v <= 20, ok
	}},
	{"a whole one-step pipeline run over a fake call (run setup + one step; informational)", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		step, ok1 := get("BenchmarkOneStep", "ns/op")
		direct, ok2 := get("BenchmarkDirectCall", "ns/op")
		return fmt.Sprintf("%.1f µs", (step-direct)/1e3), true, ok1 && ok2
	}},
	{"runner cost per item of a 100-wide for_each", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		v, ok := get("BenchmarkForEach100", "us/step")
		return fmt.Sprintf("%.1f µs", v), true, ok
	}},
	{"per-call Python tool vs the bare interpreter's start", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		call, ok1 := get("BenchmarkPerCallPython", "ns/op")
		bare, ok2 := get("BenchmarkBareStartPython", "ns/op")
		return fmt.Sprintf("%.2fx (%.1f ms vs %.1f ms)", call/bare, call/1e6, bare/1e6), true, ok1 && ok2
	}},
	{"per-call Bash tool vs the bare interpreter's start", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		call, ok1 := get("BenchmarkPerCallBash", "ns/op")
		bare, ok2 := get("BenchmarkBareStartBash", "ns/op")
		return fmt.Sprintf("%.2fx (%.1f ms vs %.1f ms)", call/bare, call/1e6, bare/1e6), true, ok1 && ok2
	}},
	{"persistent-mode trivial Python script ≥ 5,000 calls/s (through gRPC, parallel callers)", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		v, ok := get("BenchmarkPersistent/python/grpc/parallel", "calls/s")
		return fmt.Sprintf("%.0f calls/s", v), v >= 5000, ok
	}},
	{"WASM reactor pool p50 ≤ 100 µs (trivial guest)", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		v, ok := get("BenchmarkReactorCall/ping", "p50-us")
		return fmt.Sprintf("%.0f µs", v), v <= 100, ok
	}},
	{"service dependency check on a call, healthy service, p50 ≤ 1 ms (real engine)", func(get func(string, string) (float64, bool)) (string, bool, bool) {
		v, ok := get("BenchmarkDockerEnsureHealthy", "p50-ns")
		return fmt.Sprintf("%.1f µs", v/1e3), v <= 1e6, ok
	}},
}

func formatMetric(v float64, unit string) string {
	switch unit {
	case "ns/op":
		switch {
		case v >= 1e6:
			return fmt.Sprintf("%.2f ms/op", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.1f µs/op", v/1e3)
		}
		return fmt.Sprintf("%.0f ns/op", v)
	case "B/op", "allocs/op", "calls/s":
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
}

// writeBetweenMarkers replaces what lies between the markers in path, or
// appends a new section when the file has none.
func writeBetweenMarkers(path, md string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(old, []byte(beginMarker))
	j := bytes.Index(old, []byte(endMarker))
	var out bytes.Buffer
	switch {
	case i >= 0 && j > i:
		out.Write(old[:i])
		out.WriteString(md)
		out.Write(old[j+len(endMarker):])
	case i < 0 && j < 0:
		out.Write(old)
		out.WriteString("\n## Components\n\nGo benchmarks of each component, from `go run ./bench/cmd/components -write docs/PERFORMANCE.md`.\n\n")
		out.WriteString(md)
		out.WriteString("\n")
	default:
		return errors.New(path + ": unbalanced " + beginMarker + " ... " + endMarker)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
