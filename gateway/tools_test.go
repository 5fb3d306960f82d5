package gateway_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// needInterpreters skips (outside CI) when one of the interpreters is missing.
func needInterpreters(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := exec.LookPath(n)
		testenv.Require(t, n, err == nil, "run scripts/test-deps.sh")
	}
}

// writeFolder writes files into dir/name, replacing the folder's files
// one by one (as an editor would, not atomically).
func writeFolder(t *testing.T, dir, name string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, name, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func pyTool(name, desc, reply string) map[string]string {
	return map[string]string{
		"tool.yaml": "name: " + name + "\ndescription: " + desc + "\nruntime: python\nentry: main.py\n" +
			"input_schema: {type: object, properties: {text: {type: string}}}\n",
		"main.py": "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'echo': args.get('text'), 'reply': " + reply + "}))\n",
	}
}

func toolsConfig(dir string, extra string) string {
	return "tools: {dirs: " + jsonArgv([]string{dir}) + "}\n" + extra
}

// within polls cond every 20 ms for up to 10 s and returns how long it took.
func within(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := time.Since(start)
	t.Logf("%s after %v", what, d.Round(time.Millisecond))
	return d
}

func listedTool(t *testing.T, ctx context.Context, gc *goClient, name string) *mcp.Tool {
	t.Helper()
	res, err := gc.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Tools {
		if res.Tools[i].Name == name {
			return &res.Tools[i]
		}
	}
	return nil
}

func readyCode(t *testing.T, r *running) int {
	t.Helper()
	resp, err := http.Get(r.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestToolFolders serves Python, Node, Bash and Ruby tools from a tools
// dir; adds, edits, breaks, fixes and deletes folders while a 2025-11-25
// session is connected, which sees each change in its list, told by
// list_changed; a broken tool.yaml is reported with file:line and never
// stops the other tools or the gateway's readiness.
func TestToolFolders(t *testing.T) {
	needInterpreters(t, "python3", "node", "bash", "ruby")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFolder(t, dir, "echo_py", pyTool("echo_py", "Echo the text.", "1"))
	writeFolder(t, dir, "hi_node", map[string]string{
		"tool.yaml": "name: hi_node\ndescription: Greet.\nruntime: node\nentry: hi.js\n",
		"hi.js":     "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const a=JSON.parse(s);process.stdout.write('hi '+a.who)})\n",
	})
	writeFolder(t, dir, "len_sh", map[string]string{
		"tool.yaml": "name: len_sh\ndescription: Length of the input.\nruntime: bash\nentry: len.sh\n",
		"len.sh":    "input=$(cat)\necho \"${#input}\"\n",
	})
	writeFolder(t, dir, "broken", map[string]string{
		"tool.yaml": "name: broken\ndescription: Broken.\nruntime: cobol\nentry: main.py\n",
		"main.py":   "print(1)\n",
	})
	writeFolder(t, dir, "notatool", map[string]string{"README": "no tool.yaml here"})
	r := startGateway(t, toolsConfig(dir, ""), nil)
	st := r.waitReady(t, "tool:echo_py", "tool:hi_node", "tool:len_sh")
	if b := st["tool:broken"]; b.State != "invalid" || !strings.Contains(b.LastError, filepath.Join("broken", "tool.yaml")+":3:") || !strings.Contains(b.LastError, "runtime") {
		t.Errorf("broken folder status = %+v, want invalid with broken/tool.yaml:3: runtime", b)
	}
	if _, ok := st["tool:notatool"]; ok {
		t.Error("a folder without tool.yaml became a source")
	}
	if code := readyCode(t, r); code != http.StatusOK {
		t.Errorf("/readyz = %d with only a broken tool folder failing, want 200", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	names := gc.names(t, ctx)
	for _, want := range []string{"tools__echo_py", "tools__hi_node", "tools__len_sh"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list = %v, missing %s", names, want)
		}
	}
	if slices.Contains(names, "tools__broken") {
		t.Error("the broken tool is listed")
	}
	hostile := `a;b $(touch /tmp/pwned) "q" 'x' | & > <`
	res := gc.call(t, ctx, "tools__echo_py", map[string]any{"text": hostile}, nil)
	var out struct {
		Echo  string `json:"echo"`
		Reply int    `json:"reply"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || res.IsError || out.Echo != hostile || out.Reply != 1 {
		t.Errorf("echo_py: %s %s", resultText(res), b)
	}
	if res := gc.call(t, ctx, "tools__hi_node", map[string]any{"who": "ada"}, nil); res.IsError || resultText(res) != "hi ada" {
		t.Errorf("hi_node: %q", resultText(res))
	}
	if res := gc.call(t, ctx, "tools__len_sh", map[string]any{"x": 1}, nil); res.IsError || strings.TrimSpace(resultText(res)) != "7" {
		t.Errorf("len_sh: %q", resultText(res))
	}

	changes := func() int { return gc.notified("notifications/tools/list_changed") }

	// Added at run time.
	n := changes()
	writeFolder(t, dir, "late_rb", map[string]string{
		"tool.yaml": "name: late_rb\ndescription: Late.\nruntime: ruby\nentry: late.rb\n",
		"late.rb":   "require 'json'\nputs JSON.generate({late: JSON.parse(STDIN.read)['n'] * 2})\n",
	})
	within(t, "added folder listed", func() bool { return slices.Contains(gc.names(t, ctx), "tools__late_rb") })
	within(t, "list_changed for the added folder", func() bool { return changes() > n })
	if res := gc.call(t, ctx, "tools__late_rb", map[string]any{"n": 21}, nil); res.IsError || !strings.Contains(resultText(res), `"late":42`) {
		t.Errorf("late_rb: %s", resultText(res))
	}

	// Changed: a new description and a new script.
	n = changes()
	writeFolder(t, dir, "echo_py", pyTool("echo_py", "Echo the text, version two.", "2"))
	within(t, "changed description listed", func() bool {
		tl := listedTool(t, ctx, gc, "tools__echo_py")
		return tl != nil && tl.Description == "Echo the text, version two."
	})
	within(t, "list_changed for the changed folder", func() bool { return changes() > n })
	if res := gc.call(t, ctx, "tools__echo_py", map[string]any{"text": "x"}, nil); !strings.Contains(resultText(res), `"reply":2`) {
		t.Errorf("echo_py after the change: %s", resultText(res))
	}

	// Broken at run time, then fixed: the others keep working.
	writeFolder(t, dir, "echo_py", map[string]string{"tool.yaml": "name: echo_py\ndescription: x\nruntime: python\nentry: main.py\ntimeout: soon\n"})
	within(t, "broken folder unlisted", func() bool { return !slices.Contains(gc.names(t, ctx), "tools__echo_py") })
	if s := r.status(t)["tool:echo_py"]; s.State != "invalid" || !strings.Contains(s.LastError, "tool.yaml:5:") {
		t.Errorf("echo_py broken at run time: %+v", s)
	}
	if res := gc.call(t, ctx, "tools__hi_node", map[string]any{"who": "bob"}, nil); res.IsError || resultText(res) != "hi bob" {
		t.Errorf("hi_node while echo_py is broken: %q", resultText(res))
	}
	if code := readyCode(t, r); code != http.StatusOK {
		t.Errorf("/readyz = %d while a tool folder is invalid", code)
	}
	writeFolder(t, dir, "broken", map[string]string{"tool.yaml": "name: broken\ndescription: Fixed.\nruntime: python\nentry: main.py\n"})
	within(t, "fixed folder listed", func() bool { return slices.Contains(gc.names(t, ctx), "tools__broken") })

	// Deleted.
	n = changes()
	if err := os.RemoveAll(filepath.Join(dir, "late_rb")); err != nil {
		t.Fatal(err)
	}
	within(t, "deleted folder unlisted", func() bool { return !slices.Contains(gc.names(t, ctx), "tools__late_rb") })
	within(t, "list_changed for the deleted folder", func() bool { return changes() > n })
	if _, ok := r.status(t)["tool:late_rb"]; ok {
		t.Error("a deleted folder is still in /readyz")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "tools__late_rb", map[string]any{"n": 1}
	if res, err := gc.CallTool(ctx, req); err == nil && !res.IsError {
		t.Errorf("a deleted tool answered: %s", resultText(res))
	}
}

// TestToolManagement drives the @tool admin group with mcp-go's client:
// register -> call -> update -> versions -> rollback -> call, a WASM tool
// built from Go source, and bad input refused with nothing written.
func TestToolManagement(t *testing.T) {
	needInterpreters(t, "python3", "go")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	r := startGateway(t, toolsConfig(dir, "limits: {request_timeout: 5m}\nadmin: {writes: all}\n"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	if res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"@tool"}}, nil); res.IsError {
		t.Fatalf("activate @tool: %s", resultText(res))
	}
	names := gc.names(t, ctx)
	for _, n := range []string{"tool__register", "tool__build_wasm", "tool__update", "tool__delete", "tool__versions", "tool__rollback", "tool__list"} {
		if !slices.Contains(names, n) {
			t.Fatalf("%s not listed after activating @tool: %v", n, names)
		}
	}
	admin := func(tool string, args map[string]any) (string, map[string]any, bool) {
		t.Helper()
		res := gc.call(t, ctx, "tool__"+tool, args, nil)
		m, _ := res.StructuredContent.(map[string]any)
		return resultText(res), m, res.IsError
	}
	greet := func(v string) map[string]any {
		return map[string]any{
			"description": "Greet, " + v + ".", "runtime": "python", "entry": "main.py",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}},
		}
	}
	script := func(v string) map[string]any {
		return map[string]any{"main.py": "import json, sys\nprint('" + v + " ' + json.load(sys.stdin)['who'])\n"}
	}
	callGreeter := func() string {
		t.Helper()
		return resultText(gc.call(t, ctx, "tools__greeter", map[string]any{"who": "ada"}, nil))
	}

	text, out, isErr := admin("register", map[string]any{"name": "greeter", "tool": greet("v1"), "files": script("hello")})
	if isErr || out["state"] != "ready" || out["tool"] != "tools__greeter" {
		t.Fatalf("register: %s %v", text, out)
	}
	if got := callGreeter(); got != "hello ada" {
		t.Fatalf("greeter v1 = %q", got)
	}
	if text, _, isErr := admin("update", map[string]any{"name": "greeter", "tool": greet("v2"), "files": script("howdy")}); isErr {
		t.Fatalf("update: %s", text)
	}
	if got := callGreeter(); got != "howdy ada" {
		t.Errorf("greeter v2 = %q", got)
	}
	text, out, _ = admin("versions", map[string]any{"name": "greeter"})
	if vs, _ := out["versions"].([]any); len(vs) != 2 || !strings.Contains(text, "2  ") || !strings.Contains(text, "(live)") {
		t.Errorf("versions: %s", text)
	}
	if text, _, isErr := admin("rollback", map[string]any{"name": "greeter"}); isErr || !strings.Contains(text, "version 3") {
		t.Fatalf("rollback: %s", text)
	}
	if got := callGreeter(); got != "hello ada" {
		t.Errorf("greeter after rollback = %q", got)
	}
	if tl := listedTool(t, ctx, gc, "tools__greeter"); tl == nil || tl.Description != "Greet, v1." {
		t.Errorf("listed after rollback: %+v", tl)
	}

	// Bad input: refused, nothing written.
	before := treeOf(t, dir)
	for _, bad := range []map[string]any{
		{"name": "evil", "tool": greet("x"), "files": map[string]any{"../escape.py": "x", "main.py": "x"}},
		{"name": "evil", "tool": greet("x"), "files": map[string]any{"/etc/evil.py": "x", "main.py": "x"}},
		{"name": "evil", "tool": map[string]any{"description": "d", "runtime": "cobol", "entry": "main.py"}, "files": script("x")},
		{"name": "evil", "tool": greet("x"), "files": map[string]any{"other.py": "x"}},
		{"name": "../evil", "tool": greet("x"), "files": script("x")},
		{"name": "greeter", "tool": greet("x"), "files": script("x")},
	} {
		if text, _, isErr := admin("register", bad); !isErr {
			t.Errorf("register %v accepted: %s", bad, text)
		} else {
			t.Logf("refused: %s", text)
		}
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Errorf("refused input wrote files:\n%v\n->\n%v", before, after)
	}
	if got := callGreeter(); got != "hello ada" {
		t.Errorf("greeter after refused input = %q", got)
	}

	// A WASM tool from Go source.
	text, out, isErr = admin("build_wasm", map[string]any{
		"name": "shout",
		"tool": map[string]any{"description": "Upper-case the text.", "input_schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		"files": map[string]any{"main.go": `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	var a struct{ Text string }
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		os.Exit(2)
	}
	fmt.Print(strings.ToUpper(a.Text))
}
`},
	})
	if isErr || out["state"] != "ready" {
		t.Fatalf("build_wasm: %s %v", text, out)
	}
	if res := gc.call(t, ctx, "tools__shout", map[string]any{"text": "quiet"}, nil); res.IsError || resultText(res) != "QUIET" {
		t.Errorf("shout: %q", resultText(res))
	}
	if text, _, isErr := admin("build_wasm", map[string]any{"name": "bad_go", "tool": map[string]any{"description": "d"}, "files": map[string]any{"main.go": "package main\nfunc main() { undefined() }\n"}}); !isErr || !strings.Contains(text, "undefined") {
		t.Errorf("build_wasm of broken Go: %s", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad_go")); err == nil {
		t.Error("a failed build left a tool folder")
	}

	// Delete, and restore by rollback.
	if text, _, isErr := admin("delete", map[string]any{"name": "greeter"}); isErr {
		t.Fatalf("delete: %s", text)
	}
	if slices.Contains(gc.names(t, ctx), "tools__greeter") {
		t.Error("deleted tool still listed")
	}
	if text, _, isErr := admin("rollback", map[string]any{"name": "greeter"}); isErr {
		t.Fatalf("rollback of a deleted tool: %s", text)
	}
	if got := callGreeter(); got != "hello ada" {
		t.Errorf("restored greeter = %q", got)
	}
	if text, _, _ := admin("list", nil); !strings.Contains(text, "tool:greeter (script): ready") || !strings.Contains(text, "tool:shout (wasm): ready") {
		t.Errorf("list: %s", text)
	}
}

// treeOf lists the files under dir, the version store's lock aside.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Base(p) != ".lock" {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return out
}

// TestToolExamples serves a copy of examples/tools, WASM tools built from
// their sources by the gateway, and calls tools with MCP Inspector.
func TestToolExamples(t *testing.T) {
	needInterpreters(t, "python3", "node", "bash", "ruby", "go")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(t), "examples", "tools")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	// A .wasm built in the source tree must not spare the gateway the build.
	wasms, _ := filepath.Glob(filepath.Join(dir, "*", "*.wasm"))
	for _, w := range wasms {
		os.Remove(w)
	}
	folders, _ := filepath.Glob(filepath.Join(src, "*", "tool.yaml"))
	r := startGateway(t, toolsConfig(dir, ""), nil)
	deadline := time.Now().Add(4 * time.Minute)
	var st map[string]gatewayStatus
	for {
		st = statusOf(t, r)
		ready := 0
		for _, f := range folders {
			id := "tool:" + filepath.Base(filepath.Dir(f))
			if st[id].State == "ready" {
				ready++
			} else if st[id].State == "invalid" || st[id].State == "failed" {
				t.Fatalf("%s: %s: %s", id, st[id].State, st[id].LastError)
			}
		}
		if ready == len(folders) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("examples not ready: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := readyCode(t, r); code != http.StatusOK {
		t.Errorf("/readyz = %d with every example loaded", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Every example, with MCP Inspector (a client we did not write).
	for _, c := range []struct{ tool, args, want string }{
		{"tools__word_count", `{"text":"one two three"}`, `"words"`},
		{"tools__wasm_slugify", `{"text":"Hello, World"}`, `hello-world`},
		{"tools__wasm_word_count", `{"text":"a b a"}`, `"words"`},
		{"tools__slugify", `{"text":"Hello, World"}`, `hello-world`},
		{"tools__greet", `{"name":"Ann","language":"fr"}`, `Ann`},
		{"tools__text_stats", `{"text":"a b a c a b","top":2}`, `a`},
		{"tools__counter", `{"name":"visits"}`, `1`},
		{"tools__summarize_files", `{"texts":["one two","three"],"tool":"tools__word_count"}`, `3`},
	} {
		out, err := testenv.Inspector(t, ctx, r.url+"/mcp", "--method", "tools/call", "--tool-name", c.tool, "--tool-args-json", c.args)
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("inspector %s: %v\n%s", c.tool, err, out)
		}
	}
}

type gatewayStatus struct {
	State     string `json:"state"`
	LastError string `json:"last_error"`
}

func statusOf(t *testing.T, r *running) map[string]gatewayStatus {
	t.Helper()
	out := map[string]gatewayStatus{}
	for k, v := range r.status(t) {
		out[k] = gatewayStatus{State: v.State, LastError: v.LastError}
	}
	return out
}

// TestToolDirsReload: a config reload that changes tools.dirs unloads the
// old dir's tools and serves the new dir's.
func TestToolDirsReload(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	one, two := t.TempDir(), t.TempDir()
	writeFolder(t, one, "first", pyTool("first", "First.", "1"))
	writeFolder(t, two, "second", pyTool("second", "Second.", "2"))
	r := startGateway(t, toolsConfig(one, ""), nil)
	r.waitReady(t, "tool:first")
	cfg, err := config.Parse(strings.NewReader(toolsConfig(two, "")), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	snap := r.gw.Snapshot()
	if _, ok := snap.Tool("tools__first"); ok {
		t.Error("tools__first still served after its dir left the config")
	}
	if _, ok := snap.Tool("tools__second"); !ok {
		t.Error("tools__second not served when Reload returned")
	}
	st := r.status(t)
	if _, ok := st["tool:first"]; ok || st["tool:second"].State != "ready" {
		t.Errorf("status after reload: %+v", st)
	}
}
