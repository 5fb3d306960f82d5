package script

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

const wcYAML = `name: wc
description: Count words.
runtime: %s
entry: %s
input_schema: {type: object, properties: {text: {type: string}}}
`

// Simple-protocol tools in three languages, all counting words.
var simpleTools = map[string]struct{ runtime, entry, code string }{
	"python": {"python", "main.py", `import json, sys
args = json.load(sys.stdin)
print("counting", file=sys.stderr)
print(json.dumps({"words": len(args["text"].split())}))
`},
	"node": {"node", "main.js", `let s = ""
process.stdin.on("data", d => s += d)
process.stdin.on("end", () => {
  const args = JSON.parse(s)
  console.error("counting")
  console.log(JSON.stringify({words: args.text.split(/\s+/).filter(Boolean).length}))
})
`},
	"bash": {"bash", "main.sh", `read -r line
echo counting >&2
n=$(printf '%s' "$line" | sed 's/.*"text": *"\([^"]*\)".*/\1/' | wc -w)
echo "{\"words\": $n}"
`},
}

func TestSimpleProtocol(t *testing.T) {
	h := newHarness(t)
	for lang, st := range simpleTools {
		t.Run(lang, func(t *testing.T) {
			requireCmd(t, map[string]string{"python": "python3", "node": "node", "bash": "bash"}[lang])
			dir := folder(t, sprintf(wcYAML, st.runtime, st.entry), map[string]string{st.entry: st.code})
			defs, err := h.load(lang, dir, toolspec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(defs.Tools) != 1 || !strings.Contains(string(defs.Tools[0]), `"inputSchema"`) {
				t.Fatalf("definitions: %s", defs.Tools)
			}
			rec := &sdktest.Recorder{}
			r := h.call(lang, "wc", map[string]any{"text": "one two three"}, rec)
			if r.IsError || r.status() != "ok" || string(r.StructuredContent) != `{"words":3}` {
				t.Fatalf("result: %s", r.raw)
			}
			if len(rec.Notifications) != 1 || !strings.Contains(string(rec.Notifications[0].Params), "counting") {
				t.Errorf("stderr line not forwarded as a log: %+v", rec.Notifications)
			}
		})
	}
}

func TestSimpleTextErrorAndArgv(t *testing.T) {
	h := newHarness(t)
	dir := folder(t, `name: echo
description: Print argv.
runtime: bash
entry: echo.sh
args: ["--msg", "{msg}", "{missing}", "{n}", "literal {msg}"]
`, map[string]string{"echo.sh": `for a in "$@"; do printf '[%s]' "$a"; done
if [ "$2" = fail ]; then echo "it broke" >&2; exit 3; fi
echo '{"progress": 1, "total": 2, "message": "half"}' >&2
`})
	h.mustLoad("echo", dir, toolspec.Limits{})
	hostile := "$(touch /tmp/pwned); `id` | rm -rf / ; && echo \"'\\ *"
	rec := &sdktest.Recorder{}
	r := h.call("echo", "echo", map[string]any{"msg": hostile, "n": 42}, rec)
	want := "[--msg][" + hostile + "][42][literal {msg}]"
	if r.IsError || r.text() != want || r.StructuredContent != nil {
		t.Fatalf("got %s\nwant text %q", r.raw, want)
	}
	if len(rec.Progresses) != 1 || rec.Progresses[0].Message != "half" || rec.Progresses[0].Total != 2 {
		t.Errorf("progress = %+v", rec.Progresses)
	}
	r = h.call("echo", "echo", map[string]any{"msg": "fail"}, nil)
	if !r.IsError || r.status() != "error" || !strings.Contains(r.text(), "exit status 3") || !strings.Contains(r.text(), "it broke") {
		t.Fatalf("failure result: %s", r.raw)
	}
}

// rpcPython is a jsonrpc tool: it reports progress, logs, calls the tool
// named in its arguments, keeps a counter in its state, and answers.
const rpcPython = `import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def recv():
    line = sys.stdin.readline()
    return json.loads(line) if line else None
n = 0
while True:
    m = recv()
    if m is None: break
    if m.get("method") != "tools/call": continue
    tok = m["params"]["_meta"]["progressToken"]
    args = m["params"]["arguments"]
    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": tok, "progress": 1, "total": 2, "message": "working"}})
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}})
    print("a stray print")
    sys.stdout.flush()
    inner = None
    if args.get("call"):
        n += 1
        send({"jsonrpc": "2.0", "id": "c%d" % n, "method": "tools/call", "params": {"name": args["call"], "arguments": {"x": 1}}})
        inner = recv()["result"]
    send({"jsonrpc": "2.0", "id": "g", "method": "state/get", "params": {"key": "count"}})
    count = (recv()["result"]["value"] or 0) + 1
    send({"jsonrpc": "2.0", "id": "s", "method": "state/set", "params": {"key": "count", "value": count}})
    recv()
    send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "done"}],
          "structuredContent": {"count": count, "inner": inner}}})
    if not args.get("persistent_ok", True): break
`

const rpcNode = `const rl = require("readline").createInterface({input: process.stdin})
const send = m => process.stdout.write(JSON.stringify(m) + "\n")
let count = 0
const waiting = {}
rl.on("line", line => {
  const m = JSON.parse(line)
  if (m.id in waiting) { waiting[m.id](m); return }
  if (m.method !== "tools/call") return
  const tok = m.params._meta.progressToken
  send({jsonrpc: "2.0", method: "notifications/progress", params: {progressToken: tok, progress: 1, total: 2, message: "working"}})
  send({jsonrpc: "2.0", method: "notifications/message", params: {level: "info", data: "hello"}})
  const finish = inner => {
    send({jsonrpc: "2.0", id: "g", method: "state/get", params: {key: "count"}})
    waiting["g"] = g => {
      const c = (g.result.value || 0) + 1
      send({jsonrpc: "2.0", id: "s", method: "state/set", params: {key: "count", value: c}})
      waiting["s"] = () => send({jsonrpc: "2.0", id: m.id, result: {content: [{type: "text", text: "done"}], structuredContent: {count: c, inner}}})
    }
  }
  if (m.params.arguments.call) {
    send({jsonrpc: "2.0", id: "c", method: "tools/call", params: {name: m.params.arguments.call, arguments: {x: 1}}})
    waiting["c"] = r => finish(r.result)
  } else finish(null)
})
`

func TestJSONRPC(t *testing.T) {
	h := newHarness(t)
	for _, lang := range []string{"python", "node"} {
		for _, mode := range []string{"per-call", "persistent"} {
			t.Run(lang+"/"+mode, func(t *testing.T) {
				entry, code, bin := "main.py", rpcPython, "python3"
				if lang == "node" {
					entry, code, bin = "main.js", rpcNode, "node"
				}
				requireCmd(t, bin)
				dir := folder(t, sprintf("name: rpc\ndescription: d\nruntime: %s\nentry: %s\nprotocol: jsonrpc\nmode: %s\n", lang, entry, mode),
					map[string]string{entry: code})
				source := lang + "-" + mode
				h.mustLoad(source, dir, toolspec.Limits{})
				var mu sync.Mutex
				var calledWith []string
				rec := &sdktest.Recorder{CallToolFunc: func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
					mu.Lock()
					calledWith = append(calledWith, name+" "+string(args))
					mu.Unlock()
					return json.RawMessage(`{"content":[{"type":"text","text":"inner"}]}`), nil
				}}
				r := h.call(source, "rpc", map[string]any{"call": "other__tool"}, rec)
				if r.IsError || r.status() != "ok" || r.text() != "done" ||
					string(r.StructuredContent) != `{"count":1,"inner":{"content":[{"type":"text","text":"inner"}]}}` {
					t.Fatalf("result: %s", r.raw)
				}
				if len(calledWith) != 1 || strings.ReplaceAll(calledWith[0], " ", "") != `other__tool{"x":1}` {
					t.Errorf("tools/call from the script: %q", calledWith)
				}
				if len(rec.Progresses) != 1 || rec.Progresses[0].Message != "working" {
					t.Errorf("progress: %+v", rec.Progresses)
				}
				var msgs []string
				for _, n := range rec.Notifications {
					msgs = append(msgs, string(n.Params))
				}
				if len(msgs) == 0 || !strings.Contains(msgs[0], "hello") {
					t.Errorf("notifications: %q", msgs)
				}
				// State survives calls, and processes in per-call mode.
				r = h.call(source, "rpc", map[string]any{}, nil)
				if !strings.Contains(string(r.StructuredContent), `"count":2`) {
					t.Errorf("second call: %s", r.raw)
				}
			})
		}
	}
}

func TestPersistentRestartsAfterDeath(t *testing.T) {
	requireCmd(t, "python3")
	h := newHarness(t)
	dir := folder(t, "name: rpc\ndescription: d\nruntime: python\nentry: main.py\nprotocol: jsonrpc\nmode: persistent\n",
		map[string]string{"main.py": rpcPython})
	h.mustLoad("p", dir, toolspec.Limits{})
	// persistent_ok false makes the script exit after answering; the next
	// call starts it again.
	var pids []int
	for i := 0; i < 3; i++ {
		r := h.call("p", "rpc", map[string]any{"persistent_ok": false}, nil)
		if r.IsError {
			t.Fatalf("call %d: %s", i, r.raw)
		}
		h.exec.mu.Lock()
		w := h.exec.tools["p"].worker
		h.exec.mu.Unlock()
		pids = append(pids, w.p.PID())
		<-w.gone
	}
	if pids[0] == pids[1] || pids[1] == pids[2] {
		t.Errorf("the process was not restarted: pids %v", pids)
	}
}

func TestLoadErrors(t *testing.T) {
	h := newHarness(t, WithInterpreters(map[string][]string{"python": {"python3"}}))
	dir := folder(t, "name: a\ndescription: d\nruntime: bash\nentry: a.sh\n", map[string]string{"a.sh": "echo"})
	if _, err := h.load("a", dir, toolspec.Limits{}); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("runtime outside the allowlist: %v", err)
	}
	_, err := h.c.Load(context.Background(), sdk.LoadRequest{Source: "b", Kind: Kind, Spec: json.RawMessage(`{"dir": "/nonexistent", "tool": {}}`)})
	if err == nil || !strings.Contains(err.Error(), "invalid spec") || !strings.Contains(err.Error(), "description: missing") {
		t.Errorf("bad spec: %v", err)
	}
}
