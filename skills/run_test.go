package skills

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/script"
	"github.com/skillgate/skillgate/skills/shape"
)

func need(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (CI needs it)", b)
			}
			t.Skipf("%s is not installed", b)
		}
	}
}

type result struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
	Meta              map[string]any `json:"_meta"`
}

func (r result) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func decode(t testing.TB, raw json.RawMessage) result {
	t.Helper()
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return r
}

// scriptLib is a library over dir with an in-process script executor.
func scriptLib(t testing.TB, dir string, opts Options) *Library {
	t.Helper()
	ex := script.New(script.WithRoot(t.TempDir()), script.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { ex.Close() })
	opts.Dirs = append(opts.Dirs, dir)
	opts.Executor = ex
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	return openLib(t, opts)
}

const echoPy = `import json, os, sys
obj = json.load(sys.stdin)
print(json.dumps({"argv": sys.argv[1:], "input": obj.get("input"), "skill": os.environ.get("SKILLGATE_SKILL"),
  "budget": os.environ.get("SKILLGATE_OUTPUT_BUDGET"), "injected": os.environ.get("INJECTED"),
  "cwd_has_skill": os.path.exists("SKILL.md")}))
`

func TestRunScript(t *testing.T) {
	need(t, "python3", "bash", "node")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"tools/SKILL.md":          skillMD("tools", "Scripts in every runtime.", "scripts:\n  slow.sh: {timeout: 1s, stall_timeout: 5s}\n  quiet.sh: {timeout: 10s, stall_timeout: 300ms}\n"),
		"tools/scripts/echo.py":   echoPy,
		"tools/scripts/hello.sh":  "echo \"hello $1 from $(basename \"$SKILLGATE_SKILL_DIR\")\"\n",
		"tools/scripts/add.js":    "const a = process.argv.slice(2).map(Number); console.log(JSON.stringify({sum: a.reduce((x, y) => x + y, 0)}))\n",
		"tools/scripts/fail.sh":   "echo 'bad input' >&2; exit 3\n",
		"tools/scripts/slow.sh":   "for i in $(seq 1 100); do echo tick; sleep 0.1; done\n",
		"tools/scripts/quiet.sh":  "sleep 5\n",
		"tools/scripts/run":       "+x#!/bin/sh\necho exec-ok\n",
		"tools/scripts/data.txt":  "not runnable",
		"tools/scripts/escape.sh": "->../../other/evil.sh",
		"tools/notscript.sh":      "echo no\n",
		"other/evil.sh":           "echo evil\n",
	})
	l := scriptLib(t, dir, Options{OutputBudget: 4096})
	ctx := context.Background()
	run := func(req RunRequest) (result, error) {
		raw, err := l.RunScript(ctx, req, nil)
		if err != nil {
			return result{}, err
		}
		return decode(t, raw), nil
	}

	r, err := run(RunRequest{Skill: "tools", Script: "echo.py", Args: []string{"a b", "--flag", "", "$(rm -rf /)"}, Input: json.RawMessage(`{"k":1}`)})
	if err != nil || r.IsError {
		t.Fatalf("%+v %v", r, err)
	}
	sc := r.StructuredContent
	argv, _ := json.Marshal(sc["argv"])
	if string(argv) != `["a b","--flag","","$(rm -rf /)"]` || sc["skill"] != "tools" || sc["budget"] != "4096" || sc["cwd_has_skill"] != true {
		t.Errorf("echo: %v", sc)
	}
	if in, _ := json.Marshal(sc["input"]); string(in) != `{"k":1}` {
		t.Errorf("input %s", in)
	}
	if r, _ := run(RunRequest{Skill: "tools", Script: "scripts/hello.sh", Args: []string{"you"}}); strings.TrimSpace(r.text()) != "hello you from tools" {
		t.Errorf("bash: %q", r.text())
	}
	if r, _ := run(RunRequest{Skill: "tools", Script: "add.js", Args: []string{"1", "2", "39"}}); r.StructuredContent["sum"] != 42.0 {
		t.Errorf("node: %+v", r)
	}
	if r, _ := run(RunRequest{Skill: "tools", Script: "run"}); strings.TrimSpace(r.text()) != "exec-ok" {
		t.Errorf("exec: %+v", r)
	}
	r, err = run(RunRequest{Skill: "tools", Script: "fail.sh"})
	if err != nil || !r.IsError || !strings.Contains(r.text(), "bad input") {
		t.Errorf("fail: %+v %v", r, err)
	}
	// The declared policy: slow.sh prints but outlives its 1s timeout;
	// quiet.sh prints nothing past its 300ms stall timeout.
	if r, _ := run(RunRequest{Skill: "tools", Script: "slow.sh"}); !r.IsError || r.Meta["skillgate/status"] != "timeout" {
		t.Errorf("slow: %v %q", r.Meta, r.text())
	}
	if r, _ := run(RunRequest{Skill: "tools", Script: "quiet.sh"}); !r.IsError || r.Meta["skillgate/status"] != "stalled" {
		t.Errorf("quiet: %v %q", r.Meta, r.text())
	}

	for _, bad := range []RunRequest{
		{Skill: "tools", Script: "../notscript.sh"},
		{Skill: "tools", Script: "scripts/../notscript.sh"},
		{Skill: "tools", Script: "/bin/sh"},
		{Skill: "tools", Script: "escape.sh"},
		{Skill: "tools", Script: "missing.py"},
		{Skill: "tools", Script: "data.txt"},
		{Skill: "..", Script: "echo.py"},
		{Skill: "tools", Script: "echo.py", Args: make([]string, MaxArgs+1)},
	} {
		if r, err := run(bad); err == nil {
			t.Errorf("%+v ran: %+v", bad, r)
		}
	}
	// A symlink leading out is refused as such, and not offered as a
	// script in the same breath.
	if _, err := run(RunRequest{Skill: "tools", Script: "escape.sh"}); !errors.Is(err, ErrNotScript) || !strings.Contains(err.Error(), "leads out of the skill folder") || strings.Contains(err.Error(), "its scripts are") {
		t.Errorf("escape: %v", err)
	}
	if _, err := run(RunRequest{Skill: "tools", Script: "missing.py"}); !errors.Is(err, ErrNotScript) || !strings.Contains(err.Error(), "echo.py") || strings.Contains(err.Error(), "escape.sh") {
		t.Errorf("missing: %v", err)
	}
}

func TestHooks(t *testing.T) {
	need(t, "python3", "bash")
	dir := t.TempDir()
	global := t.TempDir()
	logf := filepath.Join(t.TempDir(), "order.log")
	appendLog := func(tag string) string {
		return "echo " + tag + " >> " + logf + "\n"
	}
	writeTree(t, global, map[string]string{
		"pre.sh":  appendLog("global-pre") + "cat > /dev/null\n",
		"post.sh": appendLog("global-post") + "cat > /dev/null\n",
	})
	writeTree(t, dir, map[string]string{
		"guarded/SKILL.md":        skillMD("guarded", "A skill with hooks."),
		"guarded/scripts/echo.py": echoPy,
		"guarded/hooks/pre.py": `import json, sys
ev = json.load(sys.stdin)
open(` + "'" + logf + "'" + `, "a").write("skill-pre\n")
args = ev["args"]
if args and args[0] == "deny":
    print(json.dumps({"decision": "deny", "reason": "no deleting on Fridays"}))
elif args and args[0] == "crash":
    sys.exit(4)
elif args and args[0] == "garbage":
    print("not json")
else:
    print(json.dumps({"args": ["rewritten"] + args, "env": {"INJECTED": "yes"}}))
`,
		"guarded/hooks/post.sh": appendLog("skill-post") + `ev=$(cat)
case "$ev" in
  *'"replace"'*) echo '{"result": "replaced by the post hook"}' ;;
  *'"failpost"'*) echo '{"decision": "fail", "reason": "output holds a secret"}' ;;
  *) echo '{}' ;;
esac
`,
		"plain/SKILL.md":        skillMD("plain", "A skill without hooks."),
		"plain/scripts/echo.py": echoPy,
	})
	l := scriptLib(t, dir, Options{HooksDirs: []string{global}})
	ctx := context.Background()
	readLog := func() string {
		b, _ := os.ReadFile(logf)
		os.Remove(logf)
		return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", ",")
	}

	raw, err := l.RunScript(ctx, RunRequest{Skill: "guarded", Script: "echo.py", Args: []string{"x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, raw)
	argv, _ := json.Marshal(r.StructuredContent["argv"])
	if string(argv) != `["rewritten","x"]` || r.StructuredContent["injected"] != "yes" {
		t.Errorf("rewrite/env: %s", raw)
	}
	if got := readLog(); got != "global-pre,skill-pre,skill-post,global-post" {
		t.Errorf("order: %s", got)
	}

	_, err = l.RunScript(ctx, RunRequest{Skill: "guarded", Script: "echo.py", Args: []string{"deny"}}, nil)
	var de *DeniedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDenied) || de.Reason != "no deleting on Fridays" || de.Hook != "pre.py" {
		t.Errorf("deny: %v", err)
	}
	if got := readLog(); got != "global-pre,skill-pre" {
		t.Errorf("a denied run went on: %s", got)
	}
	for _, a := range []string{"crash", "garbage"} {
		if _, err := l.RunScript(ctx, RunRequest{Skill: "guarded", Script: "echo.py", Args: []string{a}}, nil); err == nil || !strings.Contains(err.Error(), "pre.py") {
			t.Errorf("%s hook: %v", a, err)
		}
		readLog()
	}
	raw, err = l.RunScript(ctx, RunRequest{Skill: "guarded", Script: "echo.py", Args: []string{"replace"}}, nil)
	if err != nil || decode(t, raw).text() != "replaced by the post hook" {
		t.Errorf("replace: %s %v", raw, err)
	}
	_, err = l.RunScript(ctx, RunRequest{Skill: "guarded", Script: "echo.py", Args: []string{"failpost"}}, nil)
	if !errors.As(err, &de) || de.Reason != "output holds a secret" {
		t.Errorf("post fail: %v", err)
	}
	readLog()

	// A skill without hooks of its own runs the global ones only.
	if _, err := l.RunScript(ctx, RunRequest{Skill: "plain", Script: "echo.py"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := readLog(); got != "global-pre,global-post" {
		t.Errorf("plain: %s", got)
	}
}

// TestRunScriptShaped: a script printing 500 rows is shaped to the budget
// and the full output stays readable as an artifact.
func TestRunScriptShaped(t *testing.T) {
	need(t, "python3")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"db/SKILL.md": skillMD("db", "Query the orders."),
		"db/scripts/rows.py": `import json, os
rows = [{"id": i, "customer": "c%03d" % i, "amount": i * 3} for i in range(500)]
print(json.dumps({"total": len(rows), "budget": int(os.environ["SKILLGATE_OUTPUT_BUDGET"]), "rows": rows}))
`,
	})
	st := shape.NewStore(0, 0)
	l := scriptLib(t, dir, Options{OutputBudget: shape.Budget(30000, 0.1), Artifacts: st})
	raw, err := l.RunScript(context.Background(), RunRequest{Skill: "db", Script: "rows.py"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 12000 {
		t.Errorf("%d bytes", len(raw))
	}
	r := decode(t, raw)
	if r.StructuredContent["total"] != 500.0 || r.StructuredContent["budget"] != 12000.0 || r.StructuredContent["_truncated"] == nil {
		t.Errorf("%v", r.StructuredContent["_truncated"])
	}
	h := r.Meta["skillgate/shaped"].(map[string]any)["artifact"].(string)
	if c, err := st.Read(h, 0, 1<<20); err != nil || !strings.Contains(c.Data, "499") || c.Size < 20000 {
		t.Errorf("artifact: %v", err)
	}
}

// BenchmarkRunScript compares a skill script run (no hooks, global
// hooks dir empty) with the same script called on the executor directly,
// and with a pre and a post hook: a skill without hooks pays only the
// lookup and argument building.
func BenchmarkRunScript(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("no bash")
	}
	dir := b.TempDir()
	writeTree(b, dir, map[string]string{
		"plain/SKILL.md":       skillMD("plain", "No hooks."),
		"plain/scripts/hi.sh":  "echo hi\n",
		"hooked/SKILL.md":      skillMD("hooked", "Hooks."),
		"hooked/scripts/hi.sh": "echo hi\n",
		"hooked/hooks/pre.sh":  "echo '{}'\n",
		"hooked/hooks/post.sh": "echo '{}'\n",
	})
	l := scriptLib(b, dir, Options{HooksDirs: []string{b.TempDir()}})
	ctx := context.Background()
	run := func(b *testing.B, skill string) {
		for b.Loop() {
			if _, err := l.RunScript(ctx, RunRequest{Skill: skill, Script: "hi.sh", Args: []string{"x"}}, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("executor-direct", func(b *testing.B) {
		sk, _ := l.Lookup("plain")
		key := scriptKey{dir: sk.Dir, entry: "scripts/hi.sh", runtime: "bash", policy: Policy{}.key()}
		args := json.RawMessage(`{"args":["x"],"0":"x"}`)
		for b.Loop() {
			if _, err := l.runner.call(ctx, key, Policy{}, nil, args, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("skill-no-hooks", func(b *testing.B) { run(b, "plain") })
	b.Run("skill-pre-post-hooks", func(b *testing.B) { run(b, "hooked") })
}

// sleepers counts live processes running "sleep 31.7", the marker the
// leak test's scripts start in the background.
func sleepers(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == "sleep\x0031.7\x00" {
			n++
		}
	}
	return n
}

// TestNoProcessLeft: timeouts, stalls, failures and hooks leave no
// process behind.
func TestNoProcessLeft(t *testing.T) {
	need(t, "bash")
	before := sleepers(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s/SKILL.md":      skillMD("s", "Leaks.", "scripts:\n  bg.sh: {timeout: 500ms}\n"),
		"s/scripts/bg.sh": "sleep 30 &\nsleep 30\n",
		"s/hooks/pre.sh":  "sleep 30 &\necho '{}'\n",
	})
	l := scriptLib(t, dir, Options{})
	raw, err := l.RunScript(context.Background(), RunRequest{Skill: "s", Script: "bg.sh"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := decode(t, raw); r.Meta["skillgate/status"] != "timeout" {
		t.Errorf("status %v", r.Meta)
	}
	l.Close()
	deadline := time.Now().Add(5 * time.Second)
	for sleepers(t) > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := sleepers(t); n > before {
		t.Errorf("%d processes left", n-before)
	}
}

// TestRunScriptShapedPastCap: JSON output larger than the executor's
// output cap (1 MiB) is still shaped as JSON, with its totals, and the
// artifact holds all of it: RunScript asks the executor to keep the whole
// output for shaping.
func TestRunScriptShapedPastCap(t *testing.T) {
	need(t, "python3")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"db/SKILL.md": skillMD("db", "Query the orders."),
		"db/scripts/rows.py": `import json
rows = [{"id": i, "customer": "customer-%05d" % i, "note": "x" * 40} for i in range(20000)]
print(json.dumps({"total": len(rows), "rows": rows}))
`,
	})
	st := shape.NewStore(0, 0)
	l := scriptLib(t, dir, Options{OutputBudget: shape.Budget(30000, 0.1), Artifacts: st})
	raw, err := l.RunScript(context.Background(), RunRequest{Skill: "db", Script: "rows.py"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, raw)
	if r.StructuredContent["total"] != 20000.0 || r.StructuredContent["_truncated"] == nil {
		t.Fatalf("not shaped as JSON: structuredContent %.300v", r.StructuredContent)
	}
	h := r.Meta["skillgate/shaped"].(map[string]any)["artifact"].(string)
	if c, err := st.Read(h, 0, 1<<10); err != nil || c.Size <= 1<<20 {
		t.Errorf("artifact of %d bytes (err %v); want the whole output, over 1 MiB", c.Size, err)
	}
}
