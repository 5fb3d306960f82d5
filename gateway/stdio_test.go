package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestStdioFrontEnd runs the real skillgate binary as `skillgate run --stdio`
// in front of server-everything: MCP Inspector drives it as a desktop
// client would, and a raw client checks that every byte on stdout is
// protocol and that closing stdin ends the gateway and everything it
// started.
func TestStdioFrontEnd(t *testing.T) {
	// Orphans of skillgate's children come back to the test process, so a
	// leaked upstream shows up in ChildPIDs.
	testenv.Subreaper(t)
	before := testenv.ChildPIDs()

	everything := testenv.NodeServer(t, "server-everything")
	bin := goBuild(t, "./cmd/skillgate", "skillgate")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	yaml := "servers:\n  everything:\n    command: " + strconv.Quote(everything[0]) +
		"\n    args: " + jsonArgv(everything[1:]) + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("inspector", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		target := []string{bin, "run", "--stdio", "-c", cfg, "--"}
		out, err := testenv.Inspector(t, ctx, append(target, "--method", "tools/list", "--format", "json")...)
		if err != nil {
			t.Fatalf("tools/list: %v\nstdout:\n%s", err, out)
		}
		var list struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
		}
		var names []string
		for _, tl := range list.Result.Tools {
			names = append(names, tl.Name)
		}
		if !slices.Contains(names, "everything__echo") {
			t.Errorf("tools/list lacks everything__echo: %v", names)
		}
		out, err = testenv.Inspector(t, ctx, append(target, "--method", "tools/call", "--tool-name", "everything__echo",
			"--tool-arg", "message=over stdio", "--format", "json")...)
		if err != nil {
			t.Fatalf("tools/call everything__echo: %v\nstdout:\n%s", err, out)
		}
		if !strings.Contains(string(out), "Echo: over stdio") {
			t.Errorf("tools/call everything__echo: output lacks the echo:\n%s", out)
		}
	})
	waitNoNewChildren(t, before, 15*time.Second)

	// The official Go SDK launching the gateway, as Claude Code launches a
	// server: what server-everything asks mid-call (sampling, elicitation)
	// reaches the SDK's handlers over stdio, and a subscription's updates
	// arrive.
	t.Run("go-sdk", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var updates atomic.Int32
		c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
			//lint:ignore SA1019 the gateway must relay sampling while servers use it
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				//lint:ignore SA1019 see above
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled over stdio"}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace Hopper"}}, nil
			},
			ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updates.Add(1) },
		})
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "run", "--stdio", "-c", cfg)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for tool, want := range map[string]string{
			"everything__trigger-sampling-request":    "sampled over stdio",
			"everything__trigger-elicitation-request": "Grace Hopper",
		} {
			args := map[string]any{}
			if strings.Contains(tool, "sampling") {
				args["prompt"] = "hi"
			}
			if text, isErr := goSDKCall(t, ctx, cs, tool, args); isErr || !strings.Contains(text, want) {
				t.Errorf("%s: %q (isError %v); want %q in it", tool, text, isErr, want)
			}
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://resource/dynamic/text/2"}); err != nil {
			t.Fatal(err)
		}
		if _, isErr := goSDKCall(t, ctx, cs, "everything__toggle-subscriber-updates", map[string]any{}); isErr {
			t.Fatal("toggle-subscriber-updates failed")
		}
		for deadline := time.Now().Add(15 * time.Second); updates.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		if updates.Load() == 0 {
			t.Error("no resource update reached the stdio client in 15 s")
		}
	})
	waitNoNewChildren(t, before, 15*time.Second)

	t.Run("raw", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p, stderr := startStdioGateway(t, bin, cfg, "--log-level", "debug")
		if _, err := p.request(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
			t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
		}
		if err := p.notify("notifications/initialized", ""); err != nil {
			t.Fatal(err)
		}
		list, err := p.request(ctx, "tools/list", `{}`)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if !bytes.Contains(list, []byte(`"everything__echo"`)) {
			t.Errorf("tools/list lacks everything__echo: %s", list)
		}
		res, err := p.request(ctx, "tools/call", `{"name":"everything__echo","arguments":{"message":"raw"}}`)
		if err != nil || !bytes.Contains(res, []byte("Echo: raw")) {
			t.Errorf("tools/call everything__echo = %s, %v", res, err)
		}
		// Closing stdin is how a desktop client ends a stdio server.
		if err := p.close(t); err != nil {
			t.Errorf("skillgate exited with %v after stdin closed; want status 0\nstderr:\n%s", err, stderr.String())
		}
		lines := p.stdout()
		if len(lines) == 0 {
			t.Fatal("nothing on stdout")
		}
		for i, line := range lines {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
			}
			if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &m) != nil || m.JSONRPC != "2.0" || (m.ID == nil && m.Method == "") {
				t.Errorf("stdout line %d is not a JSON-RPC message: %q", i+1, line)
			}
		}
		if stderr.Len() == 0 {
			t.Errorf("nothing on stderr at --log-level debug: the log went somewhere else")
		}
	})
	waitNoNewChildren(t, before, 15*time.Second)
}

// waitNoNewChildren waits until the test process has no live child that
// was not there before (the subreaper makes orphans children too), and
// fails naming each one left. With no children before, it is
// testenv.WaitNoChildren.
func waitNoNewChildren(t *testing.T, before []int, timeout time.Duration) {
	t.Helper()
	if len(before) == 0 {
		testenv.WaitNoChildren(t, timeout)
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, pid := range testenv.ChildPIDs() {
			if !slices.Contains(before, pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, pid := range left {
				cmd, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
				b.WriteString("\n  pid " + itoa(pid) + ": " + string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
			}
			t.Errorf("%d processes left after %v:%s", len(left), timeout, b.String())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
