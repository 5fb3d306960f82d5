package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/gateway/config"
)

// registerArgs are tool__register's arguments for a Python tool named name.
func registerArgs(name string) map[string]any {
	return map[string]any{
		"name": name,
		"tool": map[string]any{"description": "Say hi.", "runtime": "python", "entry": "main.py",
			"input_schema": map[string]any{"type": "object"}},
		"files": map[string]any{"main.py": "print('hi from " + name + "')\n"},
	}
}

// refusal calls tool and returns the text of its result, or of the
// JSON-RPC error refusing it, and whether it was refused (either way).
func refusal(ctx context.Context, gc *goClient, tool string, args map[string]any) (string, bool) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := gc.CallTool(ctx, req)
	if err != nil {
		return err.Error(), true
	}
	return resultText(res), res.IsError
}

// TestAdminWritesHTTP: admin.writes decides which HTTP clients may call
// the management tools that change what the gateway runs (mcp-go's client,
// in both protocol eras, calling tool__register directly and through
// call_tool). Under the default (trusted) and no auth.tokens a client is
// refused, with what to do, and nothing is written; with a token, or
// under admin.writes: all, it registers a tool that then runs; under none
// no endpoint serves the write tools. The read-only tool__list works
// everywhere.
func TestAdminWritesHTTP(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cases := []struct {
		name, extra, token string
		allowed, served    bool
		want               string // in the refusal
	}{
		{name: "trusted without tokens", served: true,
			want: "tool__register changes what the gateway runs (what it writes runs as the gateway's user), so over HTTP it needs a token of auth.tokens"},
		{name: "trusted with a token", extra: "auth: {tokens: [s3cret]}\n", token: "s3cret", allowed: true, served: true},
		{name: "all", extra: "admin: {writes: all}\n", allowed: true, served: true},
		{name: "none", extra: "admin:\n  writes: none\n",
			want: "it changes what the gateway runs, and admin.writes: none (at test.yaml:3:11) lets no client call it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := startGateway(t, toolsConfig(dir, c.extra), nil)
			r.token = c.token
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var opts []transport.StreamableHTTPCOption
			if c.token != "" {
				opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + c.token}))
			}
			for _, era := range []string{legacy, mcp.ProtocolVersion20260728} {
				gc := newGoClient(t, ctx, r.url+"/mcp", era, opts...)
				if res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"@tool"}}, nil); res.IsError {
					t.Fatalf("%s: activate @tool: %s", era, resultText(res))
				}
				if era == legacy {
					names := gc.names(t, ctx)
					if slices.Contains(names, "tool__register") != c.served || !slices.Contains(names, "tool__list") {
						t.Errorf("%s: tools/list after activating @tool: %v", era, names)
					}
				}
				name := "hi_" + strings.ReplaceAll(era, "-", "")
				for how, call := range map[string]func() (string, bool){
					"tools/call": func() (string, bool) { return refusal(ctx, gc, "tool__register", registerArgs(name)) },
					"call_tool": func() (string, bool) {
						return refusal(ctx, gc, "call_tool", map[string]any{"name": "tool__register", "arguments": registerArgs(name + "b")})
					},
				} {
					text, refused := call()
					switch {
					case c.allowed && refused:
						t.Errorf("%s %s: refused: %s", era, how, text)
					case !c.allowed && (!refused || !strings.Contains(text, c.want)):
						t.Errorf("%s %s of tool__register: refused %v, %q; want a refusal with %q", era, how, refused, text, c.want)
					}
				}
				if c.allowed {
					if res := gc.call(t, ctx, "tools__"+name, map[string]any{}, nil); res.IsError || !strings.Contains(resultText(res), "hi from "+name) {
						t.Errorf("%s: the registered tool: %s", era, resultText(res))
					}
				} else if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
					t.Errorf("%s: a refused tool__register wrote %s (%v)", era, name, err)
				}
				if res := gc.call(t, ctx, "tool__list", map[string]any{}, nil); res.IsError {
					t.Errorf("%s: tool__list (read-only): %s", era, resultText(res))
				}
			}
		})
	}
}

// TestAdminWritesNoneAndProcess: under admin.writes: none even the
// gateway's own commands (Gateway.CallTool, as `skillgate call` uses it)
// are refused, with the setting's file:line; under the default they may
// call the write tools.
func TestAdminWritesNoneAndProcess(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	args, _ := json.Marshal(registerArgs("local"))
	for _, c := range []struct {
		extra, want string
	}{
		{"admin:\n  writes: none\n", "admin.writes: none (at test.yaml:3:11) lets no client call it"},
		{"", ""},
	} {
		r := startGateway(t, toolsConfig(t.TempDir(), c.extra), nil)
		res, err := r.gw.CallTool(t.Context(), "tool__register", args, nil)
		if err != nil {
			t.Fatal(err)
		}
		refused := strings.Contains(string(res), `"isError":true`)
		if c.want != "" && (!refused || !strings.Contains(string(res), c.want)) || c.want == "" && refused {
			t.Errorf("%q: Gateway.CallTool(tool__register) = %s; want refused: %v, with %q", c.extra, res, c.want != "", c.want)
		}
	}
}

// TestAdminWritesNested: a tool called on a client's behalf is judged by
// that client: an untrusted HTTP client's run of a pipeline whose step
// registers a tool is refused at the step, and so is its call of a script
// tool (out of process) that calls tool__register back through the host;
// the same script run by the gateway's own command (Gateway.CallTool)
// registers it.
func TestAdminWritesNested(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := callbackToolDir(t)
	r := startGateway(t, toolsConfig(dir, `pipelines:
  inline:
    sneak:
      steps:
        - id: reg
          tool: tool__register
          with: {name: sneaky, tool: {description: Sneak in., runtime: python, entry: main.py}, files: {main.py: "print(1)"}}
`), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	const want = "over HTTP it needs a token of auth.tokens"
	if text, refused := refusal(ctx, gc, "pipelines__sneak", map[string]any{}); !refused || !strings.Contains(text, want) {
		t.Errorf("pipelines__sneak over HTTP without a token: refused %v, %s", refused, text)
	}
	viaScript := map[string]any{"tool": "tool__register", "arguments": registerArgs("byscript")}
	if text, refused := refusal(ctx, gc, "tools__callback", viaScript); !refused || !strings.Contains(text, want) {
		t.Errorf("tools__callback calling tool__register, over HTTP without a token: refused %v, %s", refused, text)
	}
	for _, name := range []string{"sneaky", "byscript"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("a call for an untrusted client wrote %s (%v)", name, err)
		}
	}
	args, _ := json.Marshal(viaScript)
	res, err := r.gw.CallTool(ctx, "tools__callback", args, nil)
	if err != nil || strings.Contains(string(res), `"isError":true`) {
		t.Errorf("tools__callback calling tool__register for the gateway's own command: %s, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "byscript", "tool.yaml")); err != nil {
		t.Errorf("the gateway's own command through the script: %v", err)
	}
}

// TestAdminWritesStdio: the stdio client (the Go SDK's, on the stdio
// front end) is the user who launched the gateway: the default
// admin.writes lets it register a tool, without any token.
func TestAdminWritesStdio(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	_, inW, outR := stdioPipes(t, toolsConfig(dir, ""))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "skillgate-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdkmcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := goSDKCall(t, ctx, cs, "tool__register", registerArgs("viastdio")); isErr {
		t.Errorf("tool__register over stdio: %s", text)
	}
	if text, isErr := goSDKCall(t, ctx, cs, "tools__viastdio", map[string]any{}); isErr || !strings.Contains(text, "hi from viastdio") {
		t.Errorf("the tool registered over stdio: %q (isError %v)", text, isErr)
	}
	cs.Close()
}

// TestListenBeyondLoopbackWarns: a gateway serving on every interface
// without auth.tokens logs, as it starts, who can reach it and what to
// do; on loopback, or with a token, it does not. A reload that takes the
// tokens away warns then.
func TestListenBeyondLoopbackWarns(t *testing.T) {
	for _, c := range []struct {
		addr, extra string
		warns       bool
	}{
		{"0.0.0.0:0", "", true},
		{"0.0.0.0:0", "auth: {tokens: [s3cret]}\n", false},
		{"127.0.0.1:0", "", false},
	} {
		gw, logs := newLogged(t, "test.yaml", "listen: {http: \""+c.addr+"\"}\n"+c.extra)
		ln, err := net.Listen("tcp", c.addr) // nothing but the test connects to it, on 127.0.0.1
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- gw.Serve(ctx, ln) }()
		waitFor(t, func() bool { return strings.Contains(logs.String(), "serving MCP") })
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: Serve: %v", c.addr, err)
		}
		out := logs.String()
		warned := strings.Contains(out, "level=WARN") && strings.Contains(out, "listens beyond loopback and auth.tokens is empty") &&
			strings.Contains(out, "test.yaml:1:") && strings.Contains(out, "auth: {tokens:")
		if warned != c.warns {
			t.Errorf("%s %q: warned %v, want %v; log:\n%s", c.addr, c.extra, warned, c.warns, out)
		}
	}

	// A reload that takes the tokens away warns then.
	gw, logs := newLogged(t, "test.yaml", "listen: {http: \"0.0.0.0:0\"}\nauth: {tokens: [s3cret]}\n")
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- gw.Serve(ctx, ln) }()
	waitFor(t, func() bool { return strings.Contains(logs.String(), "serving MCP") })
	open, err := config.Parse(strings.NewReader("listen: {http: \"0.0.0.0:0\"}\n"), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Reload(ctx, open); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, "listens beyond loopback and auth.tokens is empty") {
		t.Errorf("a reload that took the tokens away did not warn; log:\n%s", out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestAdminWritesReload: a reload that sets admin.writes: none takes the
// write tools out of a session's list (the session keeps its activation
// of @tool), and one that sets it back to all lets the client call them.
func TestAdminWritesReload(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	r := startGateway(t, toolsConfig(dir, ""), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	if res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"@tool"}}, nil); res.IsError {
		t.Fatalf("activate @tool: %s", resultText(res))
	}
	if names := gc.names(t, ctx); !slices.Contains(names, "tool__register") {
		t.Fatalf("tool__register not listed after activating @tool: %v", names)
	}
	reload := func(extra string) {
		t.Helper()
		cfg, err := config.Parse(strings.NewReader(toolsConfig(dir, extra)), "test.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.gw.Reload(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	reload("admin: {writes: none}\n")
	if names := gc.names(t, ctx); slices.Contains(names, "tool__register") || !slices.Contains(names, "tool__list") {
		t.Errorf("after the reload to admin.writes: none: %v", names)
	}
	reload("admin: {writes: all}\n")
	if text, refused := refusal(ctx, gc, "tool__register", registerArgs("after")); refused {
		t.Errorf("tool__register after the reload to admin.writes: all: %s", text)
	}
}
