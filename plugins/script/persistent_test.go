package script

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// threadedPython serves each call in a thread of its own, so answers come
// out of order: {"n": k} reports progress and a log line for its call and
// answers k after a random pause; {"hang": true} never answers; {"busy":
// true} reports progress every 100 ms and never answers.
const threadedPython = `import json, random, sys, threading, time
lock = threading.Lock()
def send(m):
    with lock:
        sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def handle(m):
    args, tok = m["params"]["arguments"], m["params"]["_meta"]["progressToken"]
    if args.get("hang"):
        time.sleep(300)
    while args.get("busy"):
        send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": tok, "progress": 1}})
        time.sleep(0.1)
    n = str(args.get("n", 0))
    time.sleep(random.random() / 50)
    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": tok, "progress": 1, "message": n}})
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n, "_meta": {"progressToken": tok}}})
    send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": n}], "structuredContent": {"args": args}}})
for line in sys.stdin:
    threading.Thread(target=handle, args=(json.loads(line),), daemon=True).start()
`

func loadThreaded(t *testing.T, h *harness, extraYAML string) {
	t.Helper()
	requireCmd(t, "python3")
	dir := folder(t, "name: p\ndescription: d\nruntime: python\nentry: p.py\nprotocol: jsonrpc\nmode: persistent\n"+extraYAML,
		map[string]string{"p.py": threadedPython})
	h.mustLoad("p", dir, toolspec.Limits{})
}

func workerPID(h *harness, source string) int {
	h.exec.mu.Lock()
	t := h.exec.tools[source]
	h.exec.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.worker == nil {
		return 0
	}
	return t.worker.p.PID()
}

// TestPersistentConcurrentCalls has many calls in flight on one process,
// answered out of order: each gets its own answer, progress and log line.
func TestPersistentConcurrentCalls(t *testing.T) {
	h := newHarness(t, WithMaxProcesses(64))
	loadThreaded(t, h, "")
	h.call("p", "p", map[string]any{}, nil)
	pid := workerPID(h, "p")
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := strconv.Itoa(i)
			rec := &sdktest.Recorder{}
			r := h.call("p", "p", map[string]any{"n": i}, rec)
			if r.IsError || r.text() != n {
				t.Errorf("call %d: %s", i, r.raw)
				return
			}
			if len(rec.Progresses) != 1 || rec.Progresses[0].Message != n {
				t.Errorf("call %d: progress %+v", i, rec.Progresses)
			}
			var log struct{ Data string }
			if len(rec.Notifications) == 1 {
				_ = json.Unmarshal(rec.Notifications[0].Params, &log)
			}
			if log.Data != n {
				t.Errorf("call %d: %d notifications, data %q", i, len(rec.Notifications), log.Data)
			}
		}()
	}
	wg.Wait()
	if got := workerPID(h, "p"); got != pid {
		t.Errorf("the calls were served by pid %d and %d", pid, got)
	}
}

// TestPersistentTimeout: a call still reporting progress at its ceiling
// ends as timeout, not stalled, and the next call gets a new process.
func TestPersistentTimeout(t *testing.T) {
	noLeftovers(t)
	h := newHarness(t)
	loadThreaded(t, h, "timeout: 1500ms\nstall_timeout: 500ms\n")
	h.call("p", "p", map[string]any{}, nil)
	pid := workerPID(h, "p")
	rec := &sdktest.Recorder{}
	start := time.Now()
	r := h.call("p", "p", map[string]any{"busy": true}, rec)
	if r.status() != "timeout" || !strings.Contains(r.text(), "raise timeout") {
		t.Fatalf("result: %s", r.raw)
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Errorf("the timeout came after %v", d)
	}
	if len(rec.Progresses) < 5 {
		t.Errorf("%d progress reports", len(rec.Progresses))
	}
	if r := h.call("p", "p", map[string]any{"n": 1}, nil); r.text() != "1" || workerPID(h, "p") == pid {
		t.Fatalf("after the timeout: %s (pid %d, was %d)", r.raw, workerPID(h, "p"), pid)
	}
}

// TestPersistentCancel: a cancelled call kills the process; the next call
// starts a new one.
func TestPersistentCancel(t *testing.T) {
	noLeftovers(t)
	h := newHarness(t)
	loadThreaded(t, h, "")
	h.call("p", "p", map[string]any{}, nil)
	pid := workerPID(h, "p")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := h.c.Call(ctx, sdkCall("p", []byte(`{"name":"p","arguments":{"hang":true}}`)), &sdktest.Recorder{})
	if err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	// The next call comes while the cancelled one may still be stopping
	// the process: it must start a new one, not die with the old.
	if r := h.call("p", "p", map[string]any{"n": 2}, nil); r.text() != "2" || workerPID(h, "p") == pid {
		t.Fatalf("right after the cancel: %s (pid %d, was %d)", r.raw, workerPID(h, "p"), pid)
	}
}

// TestPersistentNotReading: a script that stops reading stdin blocks the
// executor's write of a large call; the stall timeout still ends it.
func TestPersistentNotReading(t *testing.T) {
	requireCmd(t, "python3")
	noLeftovers(t)
	h := newHarness(t)
	dir := folder(t, "name: p\ndescription: d\nruntime: python\nentry: p.py\nprotocol: jsonrpc\nmode: persistent\nstall_timeout: 500ms\n",
		map[string]string{"p.py": "import time\ntime.sleep(300)\n"})
	h.mustLoad("p", dir, toolspec.Limits{})
	start := time.Now()
	r := h.call("p", "p", map[string]any{"big": strings.Repeat("x", 1<<20)}, nil)
	if r.status() != "stalled" {
		t.Fatalf("result: %.300s", r.raw)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the stall was seen after %v", d)
	}
}

// TestPersistentArgumentsOnOneLine: arguments the client sent with
// newlines reach the script on one line.
func TestPersistentArgumentsOnOneLine(t *testing.T) {
	h := newHarness(t)
	loadThreaded(t, h, "")
	params := []byte("{\"name\": \"p\",\r\n \"arguments\": {\n  \"n\": 3,\n  \"s\": \"a\\nb\"\n}\n}")
	raw, err := h.c.Call(context.Background(), sdk.CallRequest{Source: "p", Method: "tools/call", Params: params}, &sdktest.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	var r result
	_ = json.Unmarshal(raw, &r)
	if r.IsError || string(r.StructuredContent) != `{"args":{"n":3,"s":"a\nb"}}` {
		t.Fatalf("result: %s", raw)
	}
}

// TestPersistentRewired: a persistent process gets the services' variables
// it started with; when the gateway passes new ones (a required service
// restarted on another port), the next call starts a new process with
// them, and the old one stops once the call it is serving has returned.
func TestPersistentRewired(t *testing.T) {
	requireCmd(t, "python3")
	const script = `import json, os, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["params"]["arguments"].get("slow"):
        time.sleep(1)
    text = os.environ.get("KV_PORT", "") + " " + str(os.getpid())
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": text}]}}) + "\n")
    sys.stdout.flush()
`
	h := newHarness(t)
	dir := folder(t, "name: p\ndescription: d\nruntime: python\nentry: p.py\nprotocol: jsonrpc\nmode: persistent\n", map[string]string{"p.py": script})
	h.mustLoad("p", dir, toolspec.Limits{})
	call := func(port string, slow bool) (gotPort string, pid int) {
		t.Helper()
		params, _ := json.Marshal(map[string]any{"name": "p", "arguments": map[string]any{"slow": slow},
			"_meta": map[string]any{MetaEnv: map[string]string{"KV_PORT": port}}})
		raw, err := h.c.Call(context.Background(), sdk.CallRequest{Source: "p", Method: "tools/call", Params: params}, &sdktest.Recorder{})
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal(raw, &r); err != nil || r.IsError || len(r.Content) != 1 {
			t.Fatalf("call with port %s: %s", port, raw)
		}
		f := strings.Fields(r.Content[0].Text)
		if len(f) != 2 {
			t.Fatalf("call with port %s answered %q", port, r.Content[0].Text)
		}
		pid, _ = strconv.Atoi(f[1])
		return f[0], pid
	}
	port, first := call("5001", false)
	if port != "5001" {
		t.Fatalf("first process saw KV_PORT=%q, want 5001", port)
	}
	if _, again := call("5001", false); again != first {
		t.Fatalf("same variables, new process: %d then %d", first, again)
	}
	// A slow call holds the first process while the variables change.
	slowDone := make(chan int, 1)
	go func() {
		_, pid := call("5001", true)
		slowDone <- pid
	}()
	time.Sleep(200 * time.Millisecond)
	port, second := call("5002", false)
	if port != "5002" || second == first {
		t.Fatalf("after the service moved: KV_PORT=%q from pid %d (first pid %d); want 5002 from a new process", port, second, first)
	}
	if pid := <-slowDone; pid != first {
		t.Errorf("the slow call was answered by pid %d, want the first process %d", pid, first)
	}
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(first) {
		if time.Now().After(deadline) {
			t.Fatalf("the replaced process %d still runs after its last call returned", first)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, again := call("5002", false); again != second {
		t.Errorf("the new process was replaced too: %d then %d", second, again)
	}
}

// processAlive reports whether pid runs (a zombie counts as gone).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// TestPersistentCallsHoldNoSlot: calls in flight on a persistent process do
// not take the executor's process slots. With one slot, a call that waits
// for a second call must see it arrive, and a per-call tool still runs.
func TestPersistentCallsHoldNoSlot(t *testing.T) {
	requireCmd(t, "python3")
	const script = `import json, sys, threading
released = threading.Event()
lock = threading.Lock()
def handle(m):
    args = m["params"]["arguments"]
    if args.get("release"):
        released.set()
    if args.get("wait") and not released.wait(30):
        text = "never released"
    else:
        text = "ok"
    with lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": text}]}}) + "\n")
        sys.stdout.flush()
for line in sys.stdin:
    threading.Thread(target=handle, args=(json.loads(line),), daemon=True).start()
`
	h := newHarness(t, WithMaxProcesses(1))
	dir := folder(t, "name: p\ndescription: d\nruntime: python\nentry: p.py\nprotocol: jsonrpc\nmode: persistent\n", map[string]string{"p.py": script})
	h.mustLoad("p", dir, toolspec.Limits{})
	once := folder(t, "name: once\ndescription: d\nruntime: python\nentry: o.py\n", map[string]string{"o.py": "print('once ok')\n"})
	h.mustLoad("once", once, toolspec.Limits{})

	waiting := make(chan result, 1)
	go func() { waiting <- h.call("p", "p", map[string]any{"wait": true}, nil) }()
	// Until the waiting call is in flight, a release could come first.
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.exec.mu.Lock()
		tl := h.exec.tools["p"]
		h.exec.mu.Unlock()
		tl.mu.Lock()
		inFlight := tl.worker != nil && tl.worker.users > 0
		tl.mu.Unlock()
		if inFlight {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting call never reached the process")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r := h.callCtx(ctx, "once", "once", map[string]any{}, nil); r.IsError || !strings.Contains(r.text(), "once ok") {
		t.Fatalf("a per-call tool while a persistent call is in flight: %s", r.raw)
	}
	if r := h.callCtx(ctx, "p", "p", map[string]any{"release": true}, nil); r.IsError || r.text() != "ok" {
		t.Fatalf("the releasing call: %s", r.raw)
	}
	if r := <-waiting; r.IsError || r.text() != "ok" {
		t.Fatalf("the waiting call: %s", r.raw)
	}
}

// untaggedPython serves each call in a thread: {"mark": path} creates
// path when the call arrives, {"hang": true} never answers, and {"after":
// path} waits for path, then logs a message that names no call (no
// progress token) and answers.
const untaggedPython = `import json, os, sys, threading, time
lock = threading.Lock()
def send(m):
    with lock:
        sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def handle(m):
    args = m["params"]["arguments"]
    if args.get("mark"):
        open(args["mark"], "w").close()
    if args.get("hang"):
        time.sleep(300)
    while args.get("after") and not os.path.exists(args["after"]):
        time.sleep(0.005)
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "untagged"}})
    send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "done"}]}})
for line in sys.stdin:
    threading.Thread(target=handle, args=(json.loads(line),), daemon=True).start()
`

// TestPersistentUntaggedMessageClients: a log message that names no call
// goes to the latest call only while every call in flight came from one
// client; with another client's call in flight it reaches no one.
func TestPersistentUntaggedMessageClients(t *testing.T) {
	requireCmd(t, "python3")
	h := newHarness(t)
	dir := folder(t, "name: u\ndescription: d\nruntime: python\nentry: u.py\nprotocol: jsonrpc\nmode: persistent\n",
		map[string]string{"u.py": untaggedPython})
	h.mustLoad("u", dir, toolspec.Limits{})
	tmp := t.TempDir()
	file := func(name string) string { return tmp + "/" + name }
	waitFile := func(t *testing.T, name string, done <-chan error) {
		testenv.WaitForFile(t, file(name), 20*time.Second, done)
	}
	call := func(ctx context.Context, client string, args map[string]any, rec *sdktest.Recorder) error {
		params, _ := json.Marshal(map[string]any{"name": "u", "arguments": args})
		res, err := h.c.Call(ctx, sdk.CallRequest{Source: "u", Method: "tools/call", Params: params, Client: client}, rec)
		if err == nil && !strings.Contains(string(res), `"text":"done"`) && ctx.Err() == nil {
			err = fmt.Errorf("result %s", res)
		}
		return err
	}
	// run has first's call wait in the script while second's call (a
	// hang) starts, then lets first's go on and log its untagged message.
	run := func(t *testing.T, first, second string) (mine, theirs *sdktest.Recorder) {
		mine, theirs = &sdktest.Recorder{}, &sdktest.Recorder{}
		tag := first + "-" + second
		done := make(chan error, 1)
		go func() {
			done <- call(context.Background(), first, map[string]any{"mark": file(tag + "-first"), "after": file(tag + "-release")}, mine)
		}()
		waitFile(t, tag+"-first", done)
		ctx, cancel := context.WithCancel(context.Background())
		hung := make(chan error, 1)
		go func() {
			hung <- call(ctx, second, map[string]any{"mark": file(tag + "-second"), "hang": true}, theirs)
		}()
		waitFile(t, tag+"-second", hung)
		if err := os.WriteFile(file(tag+"-release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		cancel()
		<-hung
		return mine, theirs
	}
	t.Run("another client's call in flight", func(t *testing.T) {
		mine, theirs := run(t, "client-a", "client-b")
		if len(mine.Notifications)+len(theirs.Notifications) != 0 {
			t.Fatalf("the untagged message reached a client: a %+v, b %+v", mine.Notifications, theirs.Notifications)
		}
	})
	t.Run("the same client's call in flight", func(t *testing.T) {
		mine, theirs := run(t, "client-a", "client-a")
		// It goes to the latest call, which is the same client's.
		if len(mine.Notifications) != 0 || len(theirs.Notifications) != 1 {
			t.Fatalf("untagged message: first call %+v, latest call %+v", mine.Notifications, theirs.Notifications)
		}
	})
}
