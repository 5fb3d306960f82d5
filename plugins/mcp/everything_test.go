package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestEverything runs the reference server-everything over stdio behind the
// executor, through real gRPC.
func TestEverything(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	base := warmBaseline(t)
	t.Run("cases", func(t *testing.T) {
		h := newHarness(t)
		spec := map[string]any{"command": argv[0], "args": argv[1:]}
		defs := h.load("everything", spec)

		t.Run("definitions are exactly what the server sends", func(t *testing.T) {
			names := toolNames(t, defs.Tools)
			for _, want := range []string{"echo", "trigger-long-running-operation", "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
				if !slices.Contains(names, want) {
					t.Fatalf("tools = %v; want %s (conditional tools need our client capabilities)", names, want)
				}
			}
			if len(defs.Resources) == 0 || len(defs.ResourceTemplates) == 0 || len(defs.Prompts) == 0 {
				t.Fatalf("%d resources, %d templates, %d prompts", len(defs.Resources), len(defs.ResourceTemplates), len(defs.Prompts))
			}
			var server struct {
				ProtocolVersion string `json:"protocolVersion"`
				ServerInfo      struct {
					Name string `json:"name"`
				} `json:"serverInfo"`
			}
			if err := json.Unmarshal(defs.Server, &server); err != nil || server.ProtocolVersion != "2025-11-25" || server.ServerInfo.Name == "" {
				t.Fatalf("server = %s", defs.Server)
			}
			// A second client of our own reads tools/list off the wire:
			// every definition must be byte for byte what it sees, but
			// for a tool that requires a task, which the executor runs
			// itself (tasks.go).
			wire := rawToolsList(t, argv)
			if len(wire) != len(defs.Tools) {
				t.Fatalf("%d tools on the wire, %d loaded", len(wire), len(defs.Tools))
			}
			for i := range wire {
				wire[i] = bytes.Replace(wire[i], []byte(`,"execution":{"taskSupport":"required"}`), nil, 1)
				if string(wire[i]) != string(defs.Tools[i]) {
					t.Fatalf("tool %d:\n wire   %s\n loaded %s", i, wire[i], defs.Tools[i])
				}
			}
		})

		t.Run("echo", func(t *testing.T) {
			res := h.mustCall("everything", "echo", map[string]any{"message": "hello"}, nil)
			if got := text(t, res); got != "Echo: hello" {
				t.Fatalf("echo = %q (%s)", got, res)
			}
		})

		t.Run("progress arrives in order before the result", func(t *testing.T) {
			rec := &sdktest.Recorder{}
			h.mustCall("everything", "trigger-long-running-operation", map[string]any{"duration": 0.4, "steps": 4}, rec)
			if len(rec.Progresses) != 4 {
				t.Fatalf("progress = %+v", rec.Progresses)
			}
			for i, p := range rec.Progresses {
				if p.Progress != float64(i+1) || p.Total != 4 {
					t.Fatalf("progress[%d] = %+v", i, p)
				}
			}
		})

		t.Run("sampling and elicitation reach the calling client", func(t *testing.T) {
			var methods []string
			rec := &sdktest.Recorder{RequestFunc: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				methods = append(methods, method)
				switch method {
				case "sampling/createMessage":
					if !strings.Contains(string(params), "context: what is 2+2") {
						return nil, fmt.Errorf("params %s", params)
					}
					return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"four"},"model":"test-model","stopReason":"endTurn"}`), nil
				case "elicitation/create":
					return json.RawMessage(`{"action":"decline"}`), nil
				}
				return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound, Message: method}
			}}
			res := text(t, h.mustCall("everything", "trigger-sampling-request", map[string]any{"prompt": "what is 2+2"}, rec))
			if !strings.Contains(res, "four") || !strings.Contains(res, "test-model") {
				t.Fatalf("sampling result = %s", res)
			}
			res = string(h.mustCall("everything", "trigger-elicitation-request", map[string]any{}, rec))
			if !strings.Contains(res, "decline") {
				t.Fatalf("elicitation result = %s", res)
			}
			if !slices.Equal(methods, []string{"sampling/createMessage", "elicitation/create"}) {
				t.Fatalf("requests = %v", methods)
			}
		})

		t.Run("other methods pass through", func(t *testing.T) {
			ctx := context.Background()
			res, err := h.c.Call(ctx, sdk.CallRequest{Source: "everything", Method: "prompts/get",
				Params: json.RawMessage(`{"name":"args-prompt","arguments":{"city":"Paris"}}`)}, &sdktest.Recorder{})
			if err != nil || !strings.Contains(string(res), "Paris") {
				t.Fatalf("prompts/get = %s, %v", res, err)
			}
			var uri struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(defs.Resources[0], &uri)
			res, err = h.c.Call(ctx, sdk.CallRequest{Source: "everything", Method: "resources/read", Params: mustJSON(uri)}, &sdktest.Recorder{})
			if err != nil || !strings.Contains(string(res), uri.URI) {
				t.Fatalf("resources/read %s = %.200s, %v", uri.URI, res, err)
			}
			res, err = h.c.Call(ctx, sdk.CallRequest{Source: "everything", Method: "completion/complete",
				Params: json.RawMessage(`{"ref":{"type":"ref/prompt","name":"completable-prompt"},"argument":{"name":"department","value":"E"}}`)}, &sdktest.Recorder{})
			if err != nil || !strings.Contains(string(res), "Engineering") {
				t.Fatalf("completion/complete = %s, %v", res, err)
			}
			if res, err = h.c.Call(ctx, sdk.CallRequest{Source: "everything", Method: "ping"}, &sdktest.Recorder{}); err != nil || string(res) != "{}" {
				t.Fatalf("ping = %s, %v", res, err)
			}
			_, err = h.c.Call(ctx, sdk.CallRequest{Source: "everything", Method: "resources/read", Params: json.RawMessage(`{"uri":"nope://x"}`)}, &sdktest.Recorder{})
			var rpcErr *sdk.RPCError
			if !errors.As(err, &rpcErr) {
				t.Fatalf("unknown resource: %v", err)
			}
		})

		t.Run("cancellation", func(t *testing.T) {
			rec := &sdktest.Recorder{}
			ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := h.callCtx(ctx, "everything", "trigger-long-running-operation", map[string]any{"duration": 30, "steps": 60}, rec)
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
				t.Fatalf("err = %v after %v", err, time.Since(start))
			}
			h.mustCall("everything", "echo", map[string]any{"message": "after cancel"}, nil)
		})

		t.Run("list_changed brings the new definitions", func(t *testing.T) {
			h.mustCall("everything", "gzip-file-as-resource", map[string]any{
				"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8gd29ybGQ=",
			}, nil)
			h.waitChange(20*time.Second, "a session resource", func(ch sdk.Change) bool {
				if ch.Source != "everything" || ch.Definitions == nil {
					return false
				}
				for _, r := range ch.Definitions.Resources {
					if strings.Contains(string(r), "demo://resource/session/hello.txt.gz") {
						return len(ch.Definitions.Tools) == len(defs.Tools)
					}
				}
				return false
			})
		})

		t.Run("resource subscriptions", func(t *testing.T) {
			ctx := context.Background()
			var uri struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(defs.Resources[0], &uri)
			if _, err := h.c.Call(ctx, sdk.CallRequest{Source: "everything", Method: "resources/subscribe", Params: mustJSON(uri)}, &sdktest.Recorder{}); err != nil {
				t.Fatal(err)
			}
			h.e.mu.Lock()
			src := h.e.sources["everything"]
			h.e.mu.Unlock()
			if got := src.subscriptions(); !slices.Equal(got, []string{uri.URI}) {
				t.Fatalf("subscriptions = %v", got)
			}
		})
	})
	checkNoLeaks(t, base)
}

// rawToolsList starts the server once more and reads tools/list with a
// client written here: initialize with skillgate's capabilities, then the
// raw tools array as it comes off the wire.
func rawToolsList(t *testing.T, argv []string) []json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":%s}}`+"\n", clientCapabilities, clientInfo)
	r := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m envelope
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch string(m.ID) {
		case "1":
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
		case "2":
			var res struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(m.Result, &res); err != nil {
				t.Fatal(err)
			}
			return res.Tools
		}
	}
}
