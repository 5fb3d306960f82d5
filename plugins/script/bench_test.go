package script

import (
	"os/exec"
	"testing"

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
		cmd.Stdin = stringsReader(`{"x":1}` + "\n")
		if _, err := cmd.Output(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPersistent is a trivial jsonrpc script in a warm process
// (target: >= 5,000 calls/s with parallel callers).
func BenchmarkPersistent(b *testing.B) {
	requireCmd(b, "python3")
	code := `import json, sys
for line in sys.stdin:
    m = json.loads(line)
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}) + "\n")
    sys.stdout.flush()
`
	h := newHarness(b, WithMaxProcesses(64))
	dir := folder(b, "name: t\ndescription: d\nruntime: python\nentry: t.py\nprotocol: jsonrpc\nmode: persistent\n", map[string]string{"t.py": code})
	h.mustLoad("t", dir, toolspec.Limits{})
	h.call("t", "t", map[string]any{}, nil) // start the process
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := h.call("t", "t", map[string]any{}, nil); r.IsError {
				b.Error(r.raw)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
