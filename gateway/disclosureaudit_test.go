package gateway_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// auditConfig is a progressive /mcp in front of the reference servers
// memory and filesystem, a server that cannot start (flaky), a bundle and
// two profiles; profileDesc is the description of profile other.
func auditConfig(t *testing.T, profileDesc string) (yaml string, vars map[string]string) {
	t.Helper()
	memory := testenv.NodeServer(t, "server-memory")
	filesystem := testenv.NodeServer(t, "server-filesystem")
	vars = map[string]string{"NODE": memory[0], "MEM": memory[1], "FS": filesystem[1], "DIR": t.TempDir(),
		"MEMFILE": filepath.Join(t.TempDir(), "memory.jsonl")}
	yaml = `
disclosure: progressive
servers:
  memory:
    command: ${NODE}
    args: ["${MEM}"]
    env: {MEMORY_FILE_PATH: "${MEMFILE}"}
  filesystem:
    command: ${NODE}
    args: ["${FS}", "${DIR}"]
  flaky:
    command: /nonexistent/flaky-mcp-server
bundles:
  files: {include: [filesystem__read_text_file, filesystem__list_directory]}
profiles:
  files: {servers: [filesystem], description: Files only}
  other: {servers: [memory], description: ` + profileDesc + `}
`
	return yaml, vars
}

func startAudit(t *testing.T) (*running, map[string]string) {
	t.Helper()
	yaml, vars := auditConfig(t, "one")
	r := startGateway(t, yaml, vars)
	r.waitReady(t, "memory", "filesystem")
	waitFor(t, func() bool { return r.status(t)["flaky"].State == "failed" })
	return r, vars
}

// TestReloadKeepsActivations: a 2025-11-25 session of the official Go
// SDK's client (which keeps its GET stream open) activates a server on a
// progressive /mcp; a reload that changes only another profile's
// description neither sends it list_changed nor takes its tools away.
func TestReloadKeepsActivations(t *testing.T) {
	r, vars := startAudit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var changes atomic.Int32
	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "skillgate-test", Version: "1"}, &sdkmcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdkmcp.ToolListChangedRequest) { changes.Add(1) },
	})
	cs, err := c.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &sdkmcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	defer cs.Close()
	if text, isErr := goSDKCall(t, ctx, cs, "activate", map[string]any{"targets": []any{"memory"}}); isErr {
		t.Fatalf("activate memory: %s", text)
	}
	waitFor(t, func() bool { return changes.Load() == 1 })
	sdkNames := func() []string {
		var out []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			out = append(out, tool.Name)
		}
		return out
	}
	if got := sdkNames(); !slices.Contains(got, "memory__read_graph") {
		t.Fatalf("after activate memory the session lists %v", got)
	}

	yaml, _ := auditConfig(t, "two")
	cfg, err := config.Parse(strings.NewReader(yaml), "reload.yaml", func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // a list_changed would have come by now
	if n := changes.Load(); n != 1 {
		t.Errorf("a reload that edited another profile's description sent %d list_changed; want none", n-1)
	}
	if got := sdkNames(); !slices.Contains(got, "memory__read_graph") {
		t.Errorf("after the reload the session lists %v; its activation of memory is gone", got)
	}
}

// TestCallRefusalsHelp: with mcp-go's client, in both eras, a direct
// tools/call of a misspelt tool suggests the close names as call_tool
// does; a tool of the failed server names the server, its state and last
// error on both paths; on a profile, a tool outside it is named as not
// served there.
func TestCallRefusalsHelp(t *testing.T) {
	r, _ := startAudit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct := func(gc *goClient, name string) string {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = map[string]any{}
		res, err := gc.CallTool(ctx, req)
		if err == nil {
			t.Errorf("direct call of %s succeeded: %s", name, resultText(res))
			return ""
		}
		if !strings.Contains(err.Error(), "-32602") && !strings.Contains(strings.ToLower(err.Error()), "invalid param") {
			t.Errorf("direct call of %s: %v; want invalid params (-32602)", name, err)
		}
		return err.Error()
	}
	for _, era := range []string{legacy, "2026-07-28"} {
		gc := newGoClient(t, ctx, r.url+"/mcp", era)
		if got := direct(gc, "memory__read_grap"); !strings.Contains(got, "did you mean memory__read_graph") {
			t.Errorf("%s: direct call of memory__read_grap: %s", era, got)
		}
		// Twice on the legacy session: the first goes through mcp-go (the
		// session is not drained yet), the second past it.
		for range 2 {
			if got := direct(gc, "filesystem__readfile"); !strings.Contains(got, "did you mean filesystem__read_file") {
				t.Errorf("%s: direct call of filesystem__readfile: %s", era, got)
			}
		}
		if got := direct(gc, "flaky__anything"); !strings.Contains(got, `"flaky" is failed`) || !strings.Contains(got, "/nonexistent/flaky-mcp-server") {
			t.Errorf("%s: direct call of a failed server's tool: %s", era, got)
		}
		res := gc.call(t, ctx, "call_tool", map[string]any{"name": "flaky__anything"}, nil)
		if got := resultText(res); !res.IsError || !strings.Contains(got, `"flaky" is failed`) || strings.Contains(got, "did you mean") {
			t.Errorf("%s: call_tool of a failed server's tool: %s", era, got)
		}

		p := newGoClient(t, ctx, r.url+"/mcp/p/files", era)
		if got := direct(p, "memory__read_graph"); !strings.Contains(got, "is not served on profile files") {
			t.Errorf("%s: direct call outside the profile: %s", era, got)
		}
		res = p.call(t, ctx, "call_tool", map[string]any{"name": "memory__read_graph"}, nil)
		if got := resultText(res); !res.IsError || !strings.Contains(got, "is not served on profile files") || strings.Contains(got, "did you mean") {
			t.Errorf("%s: call_tool outside the profile: %s", era, got)
		}
	}
}

// TestActivateAnswers: activating the failed server says it failed, with
// its last error; a stateless activate of a bundle names the bundle and
// carries the definitions in its text, listing nothing as listed;
// find_tools of a misspelt server says it is unknown and suggests the
// name.
func TestActivateAnswers(t *testing.T) {
	r, _ := startAudit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"flaky"}}, nil)
	if got := resultText(res); !strings.Contains(got, "server flaky is failed") || !strings.Contains(got, "/nonexistent/flaky-mcp-server") ||
		!strings.Contains(got, "skillgate servers") || strings.Contains(got, "they were listed already") {
		t.Errorf("activate of the failed server: %s", got)
	}

	m := newGoClient(t, ctx, r.url+"/mcp", "2026-07-28")
	res = m.call(t, ctx, "activate", map[string]any{"targets": []any{"@files"}}, nil)
	text := resultText(res)
	if res.IsError || !strings.Contains(text, "2 tool(s) of @files") || !strings.Contains(text, `"name":"filesystem__read_text_file"`) ||
		!strings.Contains(text, `"inputSchema"`) {
		t.Errorf("stateless activate @files: %s", text)
	}
	var ar struct {
		Listed    []string `json:"listed"`
		Available []string `json:"available"`
	}
	if b, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(b, &ar) != nil {
		t.Fatalf("activate's structured content: %v", err)
	}
	if len(ar.Listed) != 0 || len(ar.Available) != 2 {
		t.Errorf("stateless activate: listed %v, available %v; want nothing listed (the list stays as it is), 2 available", ar.Listed, ar.Available)
	}

	res = gc.call(t, ctx, "find_tools", map[string]any{"server": "memroy"}, nil)
	if got := resultText(res); !res.IsError || !strings.Contains(got, `unknown server "memroy"`) || !strings.Contains(got, "did you mean memory") {
		t.Errorf("find_tools of a misspelt server: %s", got)
	}
}

// TestSelfCallbackRefusal: a script tool that calls itself back through
// the gateway is refused with a message about that tool, not about a
// pipeline.
func TestSelfCallbackRefusal(t *testing.T) {
	tools := callbackToolDir(t)
	r := startGateway(t, "tools:\n  dirs: [\""+tools+"\"]\n", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("tools__callback"); return ok })
	res, err := r.gw.CallTool(ctx, "tools__callback", json.RawMessage(`{"tool":"tools__callback"}`), nil)
	got := strings.ReplaceAll(string(res), `\u003e`, ">")
	if err != nil || !strings.Contains(got, "refusing to call tools__callback: it is already running in this call chain (tools__callback -> tools__callback)") ||
		strings.Contains(got, "pipeline") || !strings.Contains(got, "script tool tools__callback called itself back through the gateway") {
		t.Errorf("a script calling itself back: %s %v", got, err)
	}
}
