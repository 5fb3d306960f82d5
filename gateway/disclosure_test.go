package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// disclosureConfig serves server-everything in progressive mode with one
// pinned tool, a bundle and two profiles.
func disclosureConfig(t *testing.T) *running {
	t.Helper()
	everything := testenv.NodeServer(t, "server-everything")
	r := startGateway(t, `
disclosure: progressive
pinned: [everything__echo]
servers:
  everything:
    command: ${CMD}
    args: `+jsonArgv(everything[1:])+`
bundles:
  math: {description: Arithmetic, include: [everything__get-sum]}
profiles:
  sums:
    disclosure: all
    servers: [everything]
    tools: ["everything__get-*"]
    allow: ["*sum*", "*env*"]
    deny: ["*env*"]
  small:
    servers: [everything]
    pinned: [everything__get-sum]
`, map[string]string{"CMD": everything[0]})
	r.waitReady(t, "everything")
	return r
}

func toolNames(t *testing.T, out []byte) []string {
	t.Helper()
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("tools/list output: %v\n%s", err, out)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

const legacy = mcp.ProtocolVersion20251125

var metaNames = []string{"find_tools", "describe_tools", "call_tool", "activate", "deactivate"}

// TestDisclosureInspector walks find -> describe -> call and activate with
// MCP Inspector's CLI in both protocol eras. Each Inspector run is its own
// connection, so the activation's effect on a session's list is covered by
// TestDisclosureSessions.
func TestDisclosureInspector(t *testing.T) {
	r := disclosureConfig(t)
	url := r.url + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inspect := func(t *testing.T, args ...string) []byte {
		t.Helper()
		out, err := testenv.Inspector(t, ctx, append([]string{url}, args...)...)
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return out
	}
	// Inspector exits 5 on an isError result, printing it all the same.
	callMeta := func(t *testing.T, era, tool, args string) toolResult {
		t.Helper()
		out, err := testenv.Inspector(t, ctx, url, "--protocol-era", era, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", args)
		var res toolResult
		if jerr := json.Unmarshal(out, &res); jerr != nil || (err != nil && !res.IsError) {
			t.Fatalf("%s: %v; result: %v\n%s", tool, err, jerr, out)
		}
		return res
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			names := toolNames(t, inspect(t, "--protocol-era", era, "--method", "tools/list"))
			if want := append(slices.Clone(metaNames), "everything__echo"); !slices.Equal(names, want) {
				t.Fatalf("progressive tools/list = %v, want %v", names, want)
			}
			found := callMeta(t, era, "find_tools", `{"query":"add two numbers"}`)
			var fr struct {
				Tools []struct {
					Name   string `json:"name"`
					Listed bool   `json:"listed"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(found.Structured, &fr); err != nil || len(fr.Tools) == 0 {
				t.Fatalf("find_tools: %v %s", err, found.text())
			}
			if fr.Tools[0].Name != "everything__get-sum" || fr.Tools[0].Listed {
				t.Errorf("find_tools 'add two numbers' -> %+v, want everything__get-sum first, not listed", fr.Tools)
			}
			if strings.Contains(found.text(), "inputSchema") {
				t.Error("find_tools answered with schemas")
			}
			desc := callMeta(t, era, "describe_tools", `{"names":["everything__get-sum"]}`)
			if !strings.Contains(desc.text(), `"inputSchema"`) || !strings.Contains(desc.text(), `"a"`) {
				t.Errorf("describe_tools: %s", desc.text())
			}
			sum := callMeta(t, era, "call_tool", `{"name":"everything__get-sum","arguments":{"a":20,"b":22}}`)
			if sum.IsError || !strings.Contains(sum.text(), "42") {
				t.Errorf("call_tool get-sum: %s", sum.text())
			}
			act := callMeta(t, era, "activate", `{"targets":["@math"]}`)
			if act.IsError {
				t.Fatalf("activate: %s", act.text())
			}
			if era == "legacy" && !strings.Contains(act.text(), "Now listed: everything__get-sum") {
				t.Errorf("legacy activate: %s", act.text())
			}
			if era == "modern" && (!strings.Contains(string(act.Structured), `"inputSchema"`) || !strings.Contains(act.text(), "call_tool")) {
				t.Errorf("modern activate should hand over definitions: %s %s", act.text(), act.Structured)
			}
			bad := callMeta(t, era, "activate", `{"targets":["nosuch"]}`)
			if !bad.IsError || !strings.Contains(bad.text(), `unknown server, tool, skill or bundle "nosuch"`) {
				t.Errorf("activate nosuch: %s", bad.text())
			}
			// The list did not change for anyone.
			if names := toolNames(t, inspect(t, "--protocol-era", era, "--method", "tools/list")); len(names) != len(metaNames)+1 {
				t.Errorf("after activation a new connection lists %v", names)
			}
		})
	}
}

type toolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

func (r toolResult) text() string {
	var s []string
	for _, c := range r.Content {
		s = append(s, c.Text)
	}
	return strings.Join(s, "\n")
}

// goClient is an mcp-go client session recording the notifications it gets.
type goClient struct {
	*client.Client
	mu    sync.Mutex
	notes []string
	prog  []float64
}

func newGoClient(t *testing.T, ctx context.Context, url, era string, opts ...transport.StreamableHTTPCOption) *goClient {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var copts []client.ClientOption
	if era == mcp.ProtocolVersion20251125 {
		copts = append(copts, client.WithProtocolVersion(era))
	}
	gc := &goClient{Client: client.NewClient(c.GetTransport(), copts...)}
	if err := gc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gc.Close() })
	gc.OnNotification(func(n mcp.JSONRPCNotification) {
		gc.mu.Lock()
		defer gc.mu.Unlock()
		gc.notes = append(gc.notes, n.Method)
		if p, ok := n.Params.AdditionalFields["progress"].(float64); ok {
			gc.prog = append(gc.prog, p)
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = era
	init.Params.ClientInfo = mcp.Implementation{Name: "skillgate-test", Version: "1"}
	if _, err := gc.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return gc
}

func (gc *goClient) names(t *testing.T, ctx context.Context) []string {
	t.Helper()
	res, err := gc.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		if !slices.Contains(metaNames, tl.Name) {
			out = append(out, tl.Name)
		}
	}
	return out
}

func (gc *goClient) call(t *testing.T, ctx context.Context, tool string, args map[string]any, token any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	res, err := gc.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func (gc *goClient) notified(method string) int {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	n := 0
	for _, m := range gc.notes {
		if m == method {
			n++
		}
	}
	return n
}

func resultText(res *mcp.CallToolResult) string {
	var s []string
	for _, c := range res.Content {
		s = append(s, mcp.GetTextFromContent(c))
	}
	return strings.Join(s, "\n")
}

// TestDisclosureSessions: with mcp-go's client, two concurrent 2025-11-25
// sessions activate different things and see different lists, each told
// by list_changed; a third sees neither; a 2026-07-28 client's list never
// changes and it reaches the tools through call_tool, progress included.
func TestDisclosureSessions(t *testing.T) {
	r := disclosureConfig(t)
	url := r.url + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	a := newGoClient(t, ctx, url, legacy)
	b := newGoClient(t, ctx, url, legacy)
	c := newGoClient(t, ctx, url, legacy)

	// find -> describe -> call with mcp-go's client.
	found := a.call(t, ctx, "find_tools", map[string]any{"query": "sum of two numbers", "limit": 3}, nil)
	var fr struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if b, err := json.Marshal(found.StructuredContent); err != nil || json.Unmarshal(b, &fr) != nil || len(fr.Tools) == 0 || fr.Tools[0].Name != "everything__get-sum" {
		t.Errorf("find_tools over mcp-go: %v %s", err, resultText(found))
	}
	if desc := a.call(t, ctx, "describe_tools", map[string]any{"names": []any{"everything__get-sum"}}, nil); !strings.Contains(resultText(desc), `"inputSchema"`) {
		t.Errorf("describe_tools over mcp-go: %s", resultText(desc))
	}
	if sum := a.call(t, ctx, "call_tool", map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 4, "b": 5}}, nil); sum.IsError || !strings.Contains(resultText(sum), "9") {
		t.Errorf("call_tool over mcp-go: %s", resultText(sum))
	}

	var wg sync.WaitGroup
	for _, act := range []struct {
		gc      *goClient
		targets []any
	}{{a, []any{"everything"}}, {b, []any{"@math", "everything__get-env"}}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := act.gc.call(t, ctx, "activate", map[string]any{"targets": act.targets}, nil)
			if res.IsError {
				t.Errorf("activate %v: %s", act.targets, resultText(res))
			}
		}()
	}
	wg.Wait()

	aNames := a.names(t, ctx)
	if len(aNames) < 10 || !slices.Contains(aNames, "everything__get-sum") || !slices.Contains(aNames, "everything__echo") {
		t.Errorf("session a (activated the server) lists %v", aNames)
	}
	if got, want := b.names(t, ctx), []string{"everything__echo", "everything__get-env", "everything__get-sum"}; !slices.Equal(got, want) {
		t.Errorf("session b lists %v, want %v", got, want)
	}
	if got := c.names(t, ctx); !slices.Equal(got, []string{"everything__echo"}) {
		t.Errorf("session c (activated nothing) lists %v", got)
	}
	for name, gc := range map[string]*goClient{"a": a, "b": b} {
		if n := gc.notified(string(mcp.MethodNotificationToolsListChanged)); n != 1 {
			t.Errorf("session %s got %d list_changed, want 1", name, n)
		}
	}
	if n := c.notified(string(mcp.MethodNotificationToolsListChanged)); n != 0 {
		t.Errorf("session c got %d list_changed, want none", n)
	}
	// A newly activated tool is called directly.
	if res := b.call(t, ctx, "everything__get-sum", map[string]any{"a": 1, "b": 2}, nil); res.IsError || !strings.Contains(resultText(res), "3") {
		t.Errorf("get-sum in session b: %s", resultText(res))
	}
	// Deactivating gives the list back.
	if res := a.call(t, ctx, "deactivate", map[string]any{"targets": []any{"everything"}}, nil); res.IsError {
		t.Errorf("deactivate: %s", resultText(res))
	}
	if got := a.names(t, ctx); !slices.Equal(got, []string{"everything__echo"}) {
		t.Errorf("session a after deactivate lists %v", got)
	}

	// Closing b ends its session and its activations.
	before := sessionsHeld(t, r)
	b.Close()
	if after := sessionsHeld(t, r); after != before-1 {
		t.Errorf("sessions holding activations: %d before b closed, %d after", before, after)
	}

	// 2026-07-28: the list is the endpoint's; call_tool reaches the rest.
	m := newGoClient(t, ctx, url, "2026-07-28")
	before2 := m.names(t, ctx)
	if res := m.call(t, ctx, "activate", map[string]any{"targets": []any{"everything"}}, nil); res.IsError {
		t.Errorf("modern activate: %s", resultText(res))
	}
	if after := m.names(t, ctx); !slices.Equal(before2, after) {
		t.Errorf("modern list changed on activate: %v -> %v", before2, after)
	}
	res := m.call(t, ctx, "call_tool", map[string]any{
		"name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 3},
	}, "tok-modern")
	if res.IsError || !strings.Contains(resultText(res), "completed") {
		t.Errorf("call_tool long-running: %s", resultText(res))
	}
	m.mu.Lock()
	prog := slices.Clone(m.prog)
	m.mu.Unlock()
	if len(prog) != 3 || prog[2] != 3 {
		t.Errorf("progress through call_tool = %v, want 1..3", prog)
	}
}

func sessionsHeld(t *testing.T, r *running) int {
	t.Helper()
	resp, err := http.Get(r.url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Sessions *int `json:"sessions"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &st); err != nil || st.Sessions == nil {
		t.Fatalf("/stats: %v %s", err, b)
	}
	return *st.Sessions
}

// TestProfiles: profile endpoints serve their fixed set in their own mode;
// an unknown profile is a 404 that names the real ones; the admin group
// stays hidden until activated.
func TestProfiles(t *testing.T) {
	r := disclosureConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	sums := newGoClient(t, ctx, r.url+"/mcp/p/sums", legacy)
	if got := sums.names(t, ctx); !slices.Equal(got, []string{"everything__get-sum"}) {
		t.Errorf("profile sums lists %v, want [everything__get-sum] (tools glob, allow, deny)", got)
	}
	res := sums.call(t, ctx, "call_tool", map[string]any{"name": "everything__echo", "arguments": map[string]any{"message": "x"}}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "is not served on profile sums") {
		t.Errorf("call_tool outside the profile: %s", resultText(res))
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "everything__echo"
	req.Params.Arguments = map[string]any{"message": "x"}
	if res, err := sums.CallTool(ctx, req); err == nil && !res.IsError {
		t.Errorf("a tool outside the profile was called directly: %s", resultText(res))
	}

	small := newGoClient(t, ctx, r.url+"/mcp/p/small", legacy)
	if got := small.names(t, ctx); !slices.Equal(got, []string{"everything__get-sum"}) {
		t.Errorf("profile small lists %v, want its pinned tool", got)
	}

	resp, err := http.Post(r.url+"/mcp/p/nope", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "/mcp/p/small") || !strings.Contains(string(body), "/mcp/p/sums") {
		t.Errorf("unknown profile: %d %q", resp.StatusCode, body)
	}

	// The admin group: hidden, then activated.
	def := newGoClient(t, ctx, r.url+"/mcp", legacy)
	if slices.Contains(def.names(t, ctx), "admin__servers") {
		t.Fatal("admin__servers listed before activation")
	}
	if res := def.call(t, ctx, "activate", map[string]any{"targets": []any{"@admin"}}, nil); res.IsError {
		t.Fatalf("activate @admin: %s", resultText(res))
	}
	if !slices.Contains(def.names(t, ctx), "admin__servers") {
		t.Fatal("admin__servers not listed after activating @admin")
	}
	if res := def.call(t, ctx, "admin__servers", nil, nil); res.IsError || !strings.Contains(resultText(res), "everything (mcp): ready") {
		t.Errorf("admin__servers: %s", resultText(res))
	}
}

// TestStdioDisclosure runs `skillgate run --stdio` in progressive mode,
// once on the default endpoint and once with --profile: activation over
// stdio changes the list and sends list_changed.
func TestStdioDisclosure(t *testing.T) {
	everything := testenv.NodeServer(t, "server-everything")
	bin := goBuild(t, "./cmd/skillgate", "skillgate")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	yaml := "disclosure: progressive\npinned: [everything__echo]\nservers:\n  everything:\n    command: " + strconv.Quote(everything[0]) +
		"\n    args: " + jsonArgv(everything[1:]) + "\nprofiles:\n  sums: {disclosure: all, tools: [\"*sum*\"]}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func(t *testing.T, extra ...string) *goClient {
		t.Helper()
		tr := transport.NewStdio(bin, nil, append([]string{"run", "--stdio", "-c", cfg}, extra...)...)
		gc := &goClient{Client: client.NewClient(tr, client.WithProtocolVersion(legacy))}
		if err := gc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gc.Close() })
		gc.OnNotification(func(n mcp.JSONRPCNotification) {
			gc.mu.Lock()
			defer gc.mu.Unlock()
			gc.notes = append(gc.notes, n.Method)
		})
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = legacy
		init.Params.ClientInfo = mcp.Implementation{Name: "skillgate-test", Version: "1"}
		if _, err := gc.Initialize(ctx, init); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		return gc
	}
	t.Run("default", func(t *testing.T) {
		gc := start(t)
		waitFor(t, func() bool { return len(gc.names(t, ctx)) == 1 })
		if res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"everything__get-sum"}}, nil); res.IsError {
			t.Fatal(resultText(res))
		}
		if got := gc.names(t, ctx); !slices.Equal(got, []string{"everything__echo", "everything__get-sum"}) {
			t.Errorf("after activation over stdio: %v", got)
		}
		waitFor(t, func() bool { return gc.notified(string(mcp.MethodNotificationToolsListChanged)) >= 1 })
		// A misspelt name gets the close names, as over HTTP.
		if err := stdioCallError(ctx, gc, "everything__get-summ"); !strings.Contains(err, "did you mean everything__get-sum") {
			t.Errorf("direct call of a misspelt tool over stdio: %s", err)
		}
	})
	t.Run("profile", func(t *testing.T) {
		gc := start(t, "--profile", "sums")
		waitFor(t, func() bool { return slices.Equal(gc.names(t, ctx), []string{"everything__get-sum"}) })
		if err := stdioCallError(ctx, gc, "everything__echo"); !strings.Contains(err, "is not served on profile sums") {
			t.Errorf("direct call outside the profile over stdio: %s", err)
		}
	})
}

// stdioCallError calls tool directly and returns the error it is refused
// with ("" when it is not).
func stdioCallError(ctx context.Context, gc *goClient, tool string) string {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = map[string]any{}
	if _, err := gc.CallTool(ctx, req); err != nil {
		return err.Error()
	}
	return ""
}

// TestModernListen: a 2026-07-28 client listening with subscriptions/listen
// is told when a config reload changes the catalog.
func TestModernListen(t *testing.T) {
	everything := testenv.NodeServer(t, "server-everything")
	base := "servers:\n  everything:\n    command: " + strconv.Quote(everything[0]) + "\n    args: " + jsonArgv(everything[1:]) + "\n"
	r := startGateway(t, base, nil)
	r.waitReady(t, "everything")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := newGoClient(t, ctx, r.url+"/mcp", "2026-07-28")
	stop, err := m.ListenAsync(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { t.Errorf("listen: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// The stream is open once the server acknowledged it: a reload before
	// that would tell a stream that is not there yet.
	waitFor(t, func() bool { return m.notified(string(mcp.MethodNotificationSubscriptionsAcknowledged)) >= 1 })
	if slices.Contains(m.names(t, ctx), "two__echo") {
		t.Fatal("two__echo listed before the reload")
	}
	cfg, err := config.Parse(strings.NewReader(base+"  two:\n    command: "+strconv.Quote(everything[0])+"\n    args: "+jsonArgv(everything[1:])+"\n"), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return m.notified(string(mcp.MethodNotificationToolsListChanged)) >= 1 })
	if !slices.Contains(m.names(t, ctx), "two__echo") {
		t.Error("two__echo not listed after the reload")
	}
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
