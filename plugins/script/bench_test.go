//go:build linux

package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// Benchmarks of calls through the gRPC boundary (sdktest), next to the bare
// interpreter start they are compared with in docs/PERFORMANCE.md:
//
//	go test -run '^$' -bench . -benchtime 3s ./plugins/script/

func benchSimple(b *testing.B, runtime, entry, code string) {
	h := newHarness(b)
	dir := folder(b, "name: t\ndescription: d\nruntime: "+runtime+"\nentry: "+entry+"\n", map[string]string{entry: code})
	h.mustLoad("t", dir, toolspec.Limits{})
	b.ResetTimer()
	for b.Loop() {
		if r := h.call("t", "t", map[string]any{"x": 1}, nil); r.IsError {
			b.Fatal(r.raw)
		}
	}
}

// BenchmarkPerCallPython is one python3 process per call, simple protocol.
func BenchmarkPerCallPython(b *testing.B) {
	requireCmd(b, "python3")
	benchSimple(b, "python", "t.py", "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n")
}

// BenchmarkPerCallBash is one bash process per call, simple protocol.
func BenchmarkPerCallBash(b *testing.B) {
	benchSimple(b, "bash", "t.sh", "read -r line\necho \"$line\"\n")
}

// BenchmarkBareStartPython is the baseline: start python3 with the same
// script and wait, without the executor.
func BenchmarkBareStartPython(b *testing.B) {
	requireCmd(b, "python3")
	py, err := resolveInterpreter("python", "python3")
	if err != nil {
		b.Fatal(err)
	}
	benchBare(b, py, "-c", "import json, sys\nprint(json.dumps(json.load(sys.stdin)))")
}

// BenchmarkBareStartBash is the baseline for bash.
func BenchmarkBareStartBash(b *testing.B) {
	benchBare(b, "bash", "-c", "read -r line; echo \"$line\"")
}

func benchBare(b *testing.B, argv ...string) {
	for b.Loop() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(`{"x":1}` + "\n")
		if _, err := cmd.Output(); err != nil {
			b.Fatal(err)
		}
	}
}

// Trivial jsonrpc scripts for the persistent benchmarks: each answers every
// call at once, one line per answer.
const (
	trivialPython = `import json, sys
for line in sys.stdin:
    m = json.loads(line)
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}) + "\n")
    sys.stdout.flush()
`
	// trivialPrint is trivialPython answering the way docs/SCRIPTS.md
	// showed: print(..., flush=True) writes the line and its newline in two
	// system calls (the tool runs with PYTHONUNBUFFERED=1).
	trivialPrint = `import json, sys
for line in sys.stdin:
    m = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}), flush=True)
`
	trivialNode = `const rl = require("readline").createInterface({input: process.stdin})
rl.on("line", line => {
  const m = JSON.parse(line)
  process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result: {content: [{type: "text", text: "ok"}]}}) + "\n")
})
`
)

// BenchmarkPersistent is a trivial jsonrpc script in a warm process (issue
// target: >= 5,000 calls/s with parallel callers). Besides calls/s it
// reports the latency percentiles and the CPU time per call of this test
// process (gateway client, gRPC both ways and the executor) and of the
// script, which are steadier than calls/s on a shared machine:
//
//	go test -run '^$' -bench Persistent -count 5 ./plugins/script/
//
// grpc goes through the plugin boundary (sdktest) as the gateway calls it;
// inproc calls the Executor directly. parallel is 4 callers per CPU,
// sequential one caller.
func BenchmarkPersistent(b *testing.B) {
	for _, lang := range []struct{ name, runtime, bin, entry, code string }{
		{"python", "python", "python3", "t.py", trivialPython},
		{"python-print", "python", "python3", "t.py", trivialPrint},
		{"node", "node", "node", "t.js", trivialNode},
	} {
		for _, via := range []string{"grpc", "inproc"} {
			for _, callers := range []string{"parallel", "sequential"} {
				b.Run(lang.name+"/"+via+"/"+callers, func(b *testing.B) {
					requireCmd(b, lang.bin)
					benchPersistent(b, lang.runtime, lang.entry, lang.code, via == "grpc", callers == "parallel")
				})
			}
		}
	}
}

func benchPersistent(b *testing.B, runtime, entry, code string, viaGRPC, parallel bool) {
	h := newHarness(b, WithMaxProcesses(64))
	dir := folder(b, "name: t\ndescription: d\nruntime: "+runtime+"\nentry: "+entry+"\nprotocol: jsonrpc\nmode: persistent\n",
		map[string]string{entry: code})
	h.mustLoad("t", dir, toolspec.Limits{})
	params := []byte(`{"name":"t","arguments":{}}`)
	call := func() {
		var raw json.RawMessage
		var err error
		req := sdk.CallRequest{Source: "t", Method: "tools/call", Params: params}
		if viaGRPC {
			raw, err = h.c.Call(context.Background(), req, &sdktest.Recorder{})
		} else {
			raw, err = h.exec.Call(context.Background(), req, &sdktest.Recorder{})
		}
		if err != nil || !bytes.Contains(raw, []byte(`"text":"ok"`)) {
			b.Fatalf("call: %v %s", err, raw)
		}
	}
	call() // start the process
	h.exec.mu.Lock()
	pid := h.exec.tools["t"].worker.p.PID()
	h.exec.mu.Unlock()

	var mu sync.Mutex
	var lat []time.Duration
	cpu0, script0 := selfCPU(), procCPU(pid)
	b.ResetTimer()
	if parallel {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			var mine []time.Duration
			for pb.Next() {
				t0 := time.Now()
				call()
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	} else {
		for b.Loop() {
			t0 := time.Now()
			call()
			lat = append(lat, time.Since(t0))
		}
	}
	b.StopTimer()
	cpu1, script1 := selfCPU(), procCPU(pid)
	n := float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "calls/s")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/n, "cpu-us/call")
	b.ReportMetric(float64((script1-script0).Microseconds())/n, "script-cpu-us/call")
	b.ReportMetric(0, "ns/op")
}

// selfCPU is the user and system CPU time of this process.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user and system CPU time of process pid (clock ticks of
// 10 ms), from /proc/pid/stat.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
