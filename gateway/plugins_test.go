package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/frontend"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// recorder collects what a call reports.
type recorder struct {
	progress []sdk.Progress
}

func (r *recorder) Progress(p sdk.Progress) error { r.progress = append(r.progress, p); return nil }
func (r *recorder) Notify(sdk.Notification) error { return nil }
func (r *recorder) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}
func (r *recorder) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

// TestThirdPartyExecutor builds examples/executor-hello on its own module
// and lets the gateway find it in a plugins dir.
func TestThirdPartyExecutor(t *testing.T) {
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(root, "examples", "executor-hello")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build executor-hello: %v\n%s", err, out)
	}
	// A non-executable file next to it is reported, not fatal.
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not a plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startGateway(t, "plugins: {dirs: ["+dir+"]}\n", nil)
	r.waitReady(t, "hello")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &recorder{}
	res, err := r.gw.CallTool(ctx, "hello__greet", json.RawMessage(`{"name":"Ada"}`), rec)
	if err != nil {
		t.Fatalf("hello__greet: %v", err)
	}
	if !strings.Contains(string(res), "Ada") {
		t.Fatalf("hello__greet result lacks the name: %s", res)
	}
	if len(rec.progress) == 0 {
		t.Errorf("no progress reached the caller")
	}
}

// TestExecutorCrashRecovers kills the mcp executor process: the gateway's
// plugin host restarts it, reloads its sources, and calls work again.
func TestExecutorCrashRecovers(t *testing.T) {
	confURL := testenv.ConformanceServer(t)
	r := startGateway(t, "servers:\n  conf:\n    url: "+confURL+"\n", nil)
	r.waitReady(t, "conf")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := r.gw.CallTool(ctx, "conf__test_simple_text", json.RawMessage(`{}`), nil); err != nil {
		t.Fatalf("before the crash: %v", err)
	}
	var killed int
	for _, pid := range testenv.ChildPIDs() {
		cmd, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
		if strings.Contains(string(cmd), "plugin\x00serve\x00mcp") {
			if err := testenv.Signal(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = pid
		}
	}
	if killed == 0 {
		t.Fatalf("no mcp executor process among the children %v", testenv.ChildPIDs())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := r.gw.CallTool(ctx, "conf__test_simple_text", json.RawMessage(`{}`), nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls still fail 30s after the executor was killed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestCallRemote calls a tool of a running gateway the way `skillgate call
// --url` does: by its base URL or its endpoint, with a token when the
// gateway wants one, and the arguments built from the tool's inputSchema.
func TestCallRemote(t *testing.T) {
	r := startGateway(t, "auth: {tokens: [tok]}\nservers:\n  conf:\n    url: "+testenv.ConformanceServer(t)+"\n", nil)
	r.token = "tok"
	r.waitReady(t, "conf")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	call := func(url, token, tool string) (json.RawMessage, json.RawMessage, error) {
		var schema json.RawMessage
		res, err := gateway.CallRemote(ctx, nil, gateway.RemoteCall{URL: url, Token: token, Tool: tool,
			Args: func(s json.RawMessage) (json.RawMessage, error) {
				schema = s
				return json.RawMessage(`{"message":"hi"}`), nil
			}}, &recorder{})
		return res, schema, err
	}
	for _, url := range []string{r.url + "/mcp", r.url, r.url + "/", strings.TrimPrefix(r.url, "http://")} {
		res, schema, err := call(url, "tok", "conf__test_tool_with_progress")
		if err != nil || !strings.Contains(string(res), `"content"`) || !strings.Contains(string(schema), `"type":"object"`) {
			t.Fatalf("CallRemote(%s) = %s, %v (inputSchema %s)", url, res, err, schema)
		}
	}
	if _, _, err := call(r.url, "tok", "conf__nope"); err == nil || !strings.Contains(err.Error(), "tool 'conf__nope' not found") {
		t.Fatalf("unknown tool: err = %v", err)
	}
	if _, _, err := call(r.url, "wrong", "conf__test_simple_text"); err == nil || !strings.Contains(err.Error(), "refused the token") {
		t.Fatalf("wrong token: err = %v", err)
	}
	if _, _, err := call(r.url, "", "conf__test_simple_text"); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("no token: err = %v", err)
	}
	if _, _, err := call("http://127.0.0.1:1", "", "x"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1/mcp") || !strings.Contains(err.Error(), "is the gateway running") {
		t.Fatalf("unreachable gateway: err = %v", err)
	}
}

// TestPluginHostCallbacks runs the probe executor as a plugin and checks
// what the gateway does with its host callbacks and settings: Host.Log
// records name the executor and keep their level (common aliases mapped,
// an unknown one kept as an attribute); a CallTool of a tool the catalog
// lacks is the JSON-RPC error docs/EXECUTORS.md documents; the plugin is
// told limits.plugin_kill_window.
func TestPluginHostCallbacks(t *testing.T) {
	dir := t.TempDir()
	installProbe(t, dir, "probe")
	r := startGateway(t, "plugins: {dirs: ["+dir+"]}\nlimits: {plugin_kill_window: 3s}\n", nil)
	r.waitReady(t, "probe")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("log", func(t *testing.T) {
		probeText(t, r, "probe__log", `{"levels":["warning","trace","fatal","critical","error","info","Weird"]}`)
		want := map[string]string{
			"warning": "level=WARN", "trace": "level=DEBUG", "fatal": "level=ERROR", "critical": "level=ERROR",
			"error": "level=ERROR", "info": "level=INFO", "Weird": "level=INFO",
		}
		lines := map[string]string{}
		for _, line := range strings.Split(r.log.String(), "\n") {
			if _, lv, ok := strings.Cut(line, `msg="probe says `); ok {
				lv, _, _ = strings.Cut(lv, `"`)
				lines[lv] = line
			}
		}
		for lv, level := range want {
			line := lines[lv]
			if !strings.Contains(line, level+" ") || !strings.Contains(line, "executor=probe") || !strings.Contains(line, "probe=yes") {
				t.Errorf("Host.Log at %q: %q; want %s, executor=probe and probe=yes", lv, line, level)
			}
		}
		if !strings.Contains(lines["Weird"], "given_level=Weird") {
			t.Errorf("Host.Log at an unknown level does not keep it: %q", lines["Weird"])
		}
		if strings.Contains(lines["warning"], "given_level") {
			t.Errorf("Host.Log at a known alias keeps it as unknown: %q", lines["warning"])
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		got := probeText(t, r, "probe__callback", `{"tool":"nosuch__tool"}`)
		if !strings.HasPrefix(got, "rpc error -32602: ") || !strings.Contains(got, "nosuch__tool") {
			t.Errorf("the plugin's CallTool of an unknown tool got %q; want the *sdk.RPCError invalid params naming the tool", got)
		}
		_, err := r.gw.CallTool(ctx, "nosuch__tool", nil, nil)
		var rpc *sdk.RPCError
		if !errors.As(err, &rpc) || rpc.Code != sdk.CodeInvalidParams || !errors.Is(err, frontend.ErrUnknownTool) ||
			strings.HasPrefix(err.Error(), "rpc error") {
			t.Errorf("Gateway.CallTool of an unknown tool: %v (%T); want an *sdk.RPCError invalid params that is ErrUnknownTool and reads as its message", err, err)
		}
		// A misspelt name gets the suggestions a client's tools/call gets.
		got = probeText(t, r, "probe__callback", `{"tool":"probe__calback"}`)
		if !strings.Contains(got, "did you mean probe__callback") {
			t.Errorf("the plugin's CallTool of a misspelt tool got %q; want it to suggest probe__callback", got)
		}
	})

	t.Run("kill window", func(t *testing.T) {
		if got := probeText(t, r, "probe__env", `{"name":"`+sdk.EnvKillWindow+`"}`); got != "3s" {
			t.Errorf("the plugin was told a kill window of %q; want limits.plugin_kill_window, 3s", got)
		}
	})
}

// probeText is toolText for a probe tool, which never answers isError.
func probeText(t *testing.T, r *running, name, args string) string {
	t.Helper()
	text, isErr := toolText(t, r, name, args)
	if isErr {
		t.Fatalf("%s: isError: %s", name, text)
	}
	return text
}
