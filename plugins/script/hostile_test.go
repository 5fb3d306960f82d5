package script

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// noLeftovers checks, when the test ends, that every process the executor
// started is gone. Subreaper makes orphaned grandchildren ours, so they
// count too.
func noLeftovers(t *testing.T) {
	t.Helper()
	testenv.Subreaper(t)
	t.Cleanup(func() { testenv.WaitNoChildren(t, 5*time.Second) })
}

func TestEntrySwappedForSymlinkAfterLoad(t *testing.T) {
	h := newHarness(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "evil.sh"), []byte("echo escaped"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := folder(t, "name: a\ndescription: d\nruntime: bash\nentry: main.sh\n", map[string]string{"main.sh": "echo fine"})
	h.mustLoad("a", dir, toolspec.Limits{})
	if r := h.call("a", "a", nil, nil); r.text() != "fine" {
		t.Fatalf("before: %s", r.raw)
	}
	if err := os.Remove(filepath.Join(dir, "main.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil.sh"), filepath.Join(dir, "main.sh")); err != nil {
		t.Fatal(err)
	}
	r := h.call("a", "a", nil, nil)
	if !r.IsError || strings.Contains(r.text(), "escaped") || !strings.Contains(r.text(), "symlink") {
		t.Fatalf("after the swap: %s", r.raw)
	}
}

func TestCleanEnvironment(t *testing.T) {
	t.Setenv("CANARY_SECRET", "canary-1")
	t.Setenv("SKILLGATE_UNDECLARED", "canary-2")
	t.Setenv("SKILLGATE_TOKEN", "declared-secret")
	t.Setenv("MY_SETTING", "declared-env")
	h := newHarness(t)
	dir := folder(t, "name: env\ndescription: d\nruntime: bash\nentry: env.sh\nenv: [MY_SETTING]\nsecrets: [SKILLGATE_TOKEN]\n",
		map[string]string{"env.sh": "env; cat /proc/self/environ | tr '\\0' '\\n'"})
	h.mustLoad("env", dir, toolspec.Limits{})
	out := h.call("env", "env", nil, nil).text()
	for _, bad := range []string{"canary-1", "canary-2", "SKILLGATE_EXECUTOR_PLUGIN"} {
		if strings.Contains(out, bad) {
			t.Errorf("the child saw %q:\n%s", bad, out)
		}
	}
	for _, good := range []string{"SKILLGATE_TOKEN=declared-secret", "MY_SETTING=declared-env", "SKILLGATE_STATE_DIR=/", "PATH="} {
		if !strings.Contains(out, good) {
			t.Errorf("the child did not get %q:\n%s", good, out)
		}
	}
}

func TestGrandchildOutlivingParent(t *testing.T) {
	noLeftovers(t)
	h := newHarness(t)
	dir := folder(t, "name: g\ndescription: d\nruntime: bash\nentry: g.sh\n",
		map[string]string{"g.sh": "sleep 300 &\nsleep 300 >/dev/null 2>&1 </dev/null &\necho parent done\n"})
	h.mustLoad("g", dir, toolspec.Limits{})
	start := time.Now()
	r := h.call("g", "g", nil, nil)
	if r.IsError || r.text() != "parent done" {
		t.Fatalf("result: %s", r.raw)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the call waited %v for the grandchild", d)
	}
}

func TestIgnoresSIGTERMAndStalls(t *testing.T) {
	noLeftovers(t)
	h := newHarness(t)
	dir := folder(t, "name: s\ndescription: d\nruntime: bash\nentry: s.sh\nstall_timeout: 500ms\ntimeout: 30s\n",
		map[string]string{"s.sh": "trap '' TERM\necho partial result\necho a log line >&2\nwhile :; do sleep 1; done\n"})
	h.mustLoad("s", dir, toolspec.Limits{})
	r := h.call("s", "s", nil, nil)
	if !r.IsError || r.status() != "stalled" {
		t.Fatalf("result: %s", r.raw)
	}
	for _, want := range []string{"partial result", "a log line", "stall_timeout"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("result lacks %q: %s", want, r.text())
		}
	}
}

func TestTimeoutWhilePrinting(t *testing.T) {
	noLeftovers(t)
	h := newHarness(t)
	dir := folder(t, "name: s\ndescription: d\nruntime: bash\nentry: s.sh\nstall_timeout: 1s\ntimeout: 1500ms\n",
		map[string]string{"s.sh": "while :; do echo tick; sleep 0.1; done\n"})
	h.mustLoad("s", dir, toolspec.Limits{})
	r := h.call("s", "s", nil, nil)
	if !r.IsError || r.status() != "timeout" || !strings.Contains(r.text(), "tick") || !strings.Contains(r.text(), "raise timeout") {
		t.Fatalf("result: %s", r.raw)
	}
}

func TestPersistentStallKillsAndRestarts(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	code := `import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["params"]["arguments"].get("hang"):
        time.sleep(300)
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}), flush=True)
`
	// The stall clock of a call to a process that has just started includes
	// the interpreter's start, which takes over a second on a busy 2-core
	// machine: a stall timeout shorter than that stalls the healthy calls.
	dir := folder(t, "name: p\ndescription: d\nruntime: python\nentry: p.py\nprotocol: jsonrpc\nmode: persistent\nstall_timeout: 5s\n",
		map[string]string{"p.py": code})
	h.mustLoad("p", dir, toolspec.Limits{})
	if r := h.call("p", "p", map[string]any{}, nil); r.text() != "ok" {
		t.Fatalf("first: %s", r.raw)
	}
	if r := h.call("p", "p", map[string]any{"hang": true}, nil); r.status() != "stalled" {
		t.Fatalf("hang: %s", r.raw)
	}
	if r := h.call("p", "p", map[string]any{}, nil); r.text() != "ok" {
		t.Fatalf("after the restart: %s", r.raw)
	}
}

func TestCancel(t *testing.T) {
	noLeftovers(t)
	h := newHarness(t)
	dir := folder(t, "name: s\ndescription: d\nruntime: bash\nentry: s.sh\n", map[string]string{"s.sh": "sleep 300\n"})
	h.mustLoad("s", dir, toolspec.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	params := []byte(`{"name":"s","arguments":{}}`)
	_, err := h.c.Call(ctx, sdkCall("s", params), &sdktest.Recorder{})
	if err == nil {
		t.Fatal("a cancelled call returned no error")
	}
}

func TestHugeStdout(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	// 1 GiB in 1 MiB writes.
	code := "import sys\nb = b'y' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.buffer.write(b)\n"
	dir := folder(t, "name: big\ndescription: d\nruntime: python\nentry: big.py\n", map[string]string{"big.py": code})
	h.mustLoad("big", dir, toolspec.Limits{OutputCap: 64 << 10})
	before := heapInUse()
	r := h.call("big", "big", nil, nil)
	after := heapInUse()
	if r.IsError || !strings.Contains(r.text(), "output truncated: 1073676288 more bytes") {
		t.Fatalf("result: %.300s", r.raw)
	}
	if len(r.text()) > 70<<10 {
		t.Errorf("kept %d bytes, cap is 64 KiB", len(r.text()))
	}
	if grew := int64(after) - int64(before); grew > 64<<20 {
		t.Errorf("heap grew by %d MiB reading 1 GiB", grew>>20)
	}
}

func TestHugeStderrOnly(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	// 100 MiB of stderr lines, nothing on stdout.
	code := "import sys\nline = b'x' * 1023 + b'\\n'\nblock = line * 1024\nfor _ in range(100):\n    sys.stderr.buffer.write(block)\n"
	dir := folder(t, "name: noisy\ndescription: d\nruntime: python\nentry: n.py\n", map[string]string{"n.py": code})
	h.mustLoad("noisy", dir, toolspec.Limits{})
	rec := &sdktest.Recorder{}
	before := heapInUse()
	r := h.call("noisy", "noisy", nil, rec)
	if r.IsError || r.status() != "ok" {
		t.Fatalf("result: %.300s", r.raw)
	}
	if n := len(rec.Notifications); n > maxLogLines+1 {
		t.Errorf("%d log notifications for one call", n)
	}
	last := rec.Notifications[len(rec.Notifications)-1]
	if !strings.Contains(string(last.Params), "more stderr lines were not forwarded") {
		t.Errorf("last notification: %s", last.Params)
	}
	if grew := int64(heapInUse()) - int64(before); grew > 64<<20 {
		t.Errorf("heap grew by %d MiB", grew>>20)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// sandboxFolder makes a tool folder (and a state dir) that an unprivileged
// sandbox user can read.
func sandboxFolder(t *testing.T, yaml string, files map[string]string) (dir, state string) {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{base, filepath.Dir(base)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir = folder(t, yaml, files)
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	state = filepath.Join(base, "state")
	return dir, state
}

func TestSandbox(t *testing.T) {
	requireCmd(t, "bwrap")
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	code := `import os, socket, sys
out = []
try:
    open(sys.argv[1]).read(); out.append("read secret")
except OSError: out.append("no secret")
try:
    open(os.path.join(os.environ["SKILLGATE_TOOL_DIR"], "x"), "w"); out.append("wrote tool dir")
except OSError: out.append("tool dir read-only")
open(os.path.join(os.environ["SKILLGATE_STATE_DIR"], "x"), "w").write("1"); out.append("state writable")
open("/tmp/x", "w").write("1"); out.append("tmp writable")
try:
    socket.create_connection(("127.0.0.1", 22), timeout=1); out.append("network")
except OSError as e: out.append("no network")
print(" ".join(out))
`
	dir := folder(t, "name: sb\ndescription: d\nruntime: python\nentry: sb.py\nargs: [\""+secret+"\"]\nsandbox: {enabled: true}\n", map[string]string{"sb.py": code})
	h.mustLoad("sb", dir, toolspec.Limits{})
	r := h.call("sb", "sb", nil, nil)
	if r.IsError || r.text() != "no secret tool dir read-only state writable tmp writable no network" {
		t.Fatalf("result: %s", r.raw)
	}
}

func TestSandboxForkBomb(t *testing.T) {
	requireCmd(t, "bwrap")
	requireCmd(t, "prlimit")
	noLeftovers(t)
	h := newHarness(t)
	yaml := "name: bomb\ndescription: d\nruntime: bash\nentry: bomb.sh\nsandbox: {enabled: true}\n" +
		"ulimits: {processes: 40}\ntimeout: 3s\nstall_timeout: 2s\n"
	dir, state := sandboxFolder(t, yaml, map[string]string{"bomb.sh": "echo starting, nproc limit $(ulimit -u)\nb() { b | b & }\nb\nwhile :; do sleep 0.5; done\n"})
	tool, err := toolspec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := toolspec.Spec{Dir: dir, Tool: *tool, StateDir: state}
	// Root is not bound by RLIMIT_NPROC: run the sandbox as nobody.
	spec.Limits.SandboxUser = "65534:65534"
	loadSpec(t, h, "bomb", spec)
	r := h.call("bomb", "bomb", nil, nil)
	if !r.IsError || (r.status() != "timeout" && r.status() != "stalled" && r.status() != "error") {
		t.Fatalf("result: %.500s", r.raw)
	}
	if !strings.Contains(r.text(), "nproc limit 40") {
		t.Errorf("the limit did not apply: %.500s", r.text())
	}
	t.Logf("fork bomb ended with status %s", r.status())
}

func TestSandboxMemoryHog(t *testing.T) {
	requireCmd(t, "bwrap")
	requireCmd(t, "prlimit")
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	code := "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n"
	dir := folder(t, "name: hog\ndescription: d\nruntime: python\nentry: hog.py\nsandbox: {enabled: true}\nulimits: {memory: 256MiB}\n",
		map[string]string{"hog.py": code})
	h.mustLoad("hog", dir, toolspec.Limits{})
	r := h.call("hog", "hog", nil, nil)
	if !r.IsError || r.status() != "error" || !strings.Contains(r.text(), "MemoryError") {
		t.Fatalf("result: %.500s", r.raw)
	}
}
