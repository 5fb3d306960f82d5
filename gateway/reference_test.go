package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
)

// TestReferenceServers is the first thing a team does: paste the
// mcpServers block of their desktop client (here the npm reference
// servers everything, filesystem and memory), import it, serve it, and
// use every server's tools through one endpoint, from a client we did not
// write (the official go-sdk), in both protocol eras. Then one server
// dies: the others answer at once, and it comes back with its data.
func TestReferenceServers(t *testing.T) {
	everything := testenv.NodeServer(t, "server-everything")
	filesystem := testenv.NodeServer(t, "server-filesystem")
	memory := testenv.NodeServer(t, "server-memory")
	files := t.TempDir()
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	desktop, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": everything[0], "args": everything[1:]},
		"filesystem": map[string]any{"command": filesystem[0], "args": append(filesystem[1:], files)},
		"memory":     map[string]any{"command": memory[0], "args": memory[1:], "env": map[string]string{"MEMORY_FILE_PATH": memFile}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	im, err := config.Import(bytes.NewReader(desktop), "claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Warnings) > 0 {
		t.Errorf("import warnings: %v", im.Warnings)
	}
	yaml, err := config.MarshalServers(im.Servers, im.Order)
	if err != nil {
		t.Fatal(err)
	}
	r := startGateway(t, string(yaml), nil)
	r.waitReady(t, "everything", "filesystem", "memory")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			cs := goSDKSession(t, ctx, r.url+"/mcp", era)
			names := map[string]bool{}
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				names[tool.Name] = true
			}
			for _, want := range []string{"everything__echo", "filesystem__write_file", "filesystem__read_text_file",
				"filesystem__list_allowed_directories", "memory__create_entities", "memory__search_nodes"} {
				if !names[want] {
					t.Errorf("tools/list lacks %s (%d tools)", want, len(names))
				}
			}
			note := filepath.Join(files, "note-"+era+".txt")
			entity := "Lisbon-" + strings.ReplaceAll(era, "-", "")
			for _, c := range []struct {
				tool    string
				args    map[string]any
				want    string
				isError bool
			}{
				{"everything__echo", map[string]any{"message": "hi " + era}, "Echo: hi " + era, false},
				// No arguments: the Go SDK sends "arguments": null, which the
				// server's schema refuses; the gateway leaves it out.
				{"filesystem__list_allowed_directories", nil, files, false},
				{"filesystem__write_file", map[string]any{"path": note, "content": "written through skillgate"}, "Successfully wrote", false},
				{"filesystem__read_text_file", map[string]any{"path": note}, "written through skillgate", false},
				// The server's own jail still holds behind the gateway.
				{"filesystem__read_text_file", map[string]any{"path": "/etc/hostname"}, "Access denied", true},
				{"memory__create_entities", map[string]any{"entities": []map[string]any{
					{"name": entity, "entityType": "city", "observations": []string{"on the Tagus"}}}}, entity, false},
				{"memory__search_nodes", map[string]any{"query": entity}, "on the Tagus", false},
			} {
				text, isErr := goSDKCall(t, ctx, cs, c.tool, c.args)
				if isErr != c.isError || !strings.Contains(text, c.want) {
					t.Errorf("%s: %q (isError %v); want %q (isError %v)", c.tool, text, isErr, c.want, c.isError)
				}
			}
			if b, err := os.ReadFile(note); err != nil || string(b) != "written through skillgate" {
				t.Errorf("the file the call wrote: %q, %v", b, err)
			}
		})
	}

	// memory dies (SIGKILL, as an OOM kill would); the others do not notice.
	pid := r.status(t)["memory"].PID
	if pid == 0 {
		t.Fatal("memory has no pid in /readyz")
	}
	if err := testenv.Signal(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cs := goSDKSession(t, ctx, r.url+"/mcp", "2025-11-25")
	if text, isErr := goSDKCall(t, ctx, cs, "filesystem__read_text_file", map[string]any{"path": filepath.Join(files, "note-2025-11-25.txt")}); isErr || text != "written through skillgate" {
		t.Errorf("filesystem while memory restarts: %q (isError %v)", text, isErr)
	}
	if text, isErr := goSDKCall(t, ctx, cs, "everything__echo", map[string]any{"message": "still here"}); isErr || !strings.Contains(text, "still here") {
		t.Errorf("everything while memory restarts: %q (isError %v)", text, isErr)
	}
	// /readyz may still show the killed process for a moment: wait for
	// its successor.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		st := r.status(t)["memory"]
		if st.State == "ready" && st.PID != 0 && st.PID != pid {
			if st.Restarts == 0 {
				t.Errorf("memory after the kill: %+v; want its restart counted", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory never came back after the kill: %+v", st)
		}
	}
	if text, isErr := goSDKCall(t, ctx, cs, "memory__search_nodes", map[string]any{"query": "Lisbon"}); isErr || !strings.Contains(text, "on the Tagus") {
		t.Errorf("memory after its restart: %q (isError %v); want the entities it stored before", text, isErr)
	}
}

// goSDKSession connects the official Go SDK's client to url, asking for
// the protocol revision era, and closes it when the test ends.
func goSDKSession(t *testing.T, ctx context.Context, url, era string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("go-sdk connect (%s): %v", era, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// goSDKCall calls a tool and returns its text content and isError; a
// protocol error fails the test.
func goSDKCall(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError
}

// asked is what server-everything asked of an askedClient in the middle
// of calls, and the progress it was sent.
type asked struct {
	mu       sync.Mutex
	sampled  string // the text of the last sampling request
	elicited string // the message of the last elicitation request
	progress []float64
}

// askedClient is a Go SDK client that answers sampling with answer and
// accepts an elicitation as Ada Lovelace, and keeps in its asked what it
// was asked and the progress it got.
func askedClient(answer string) (*mcp.Client, *asked) {
	a := &asked{}
	c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
		// Sampling is deprecated from 2026-07-28 on (SEP-2577) but still
		// served, and server-everything uses it.
		//lint:ignore SA1019 the gateway must relay it while servers use it
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					a.sampled = tc.Text
				}
			}
			//lint:ignore SA1019 see above
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: answer}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.elicited = req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.progress = append(a.progress, req.Params.Progress)
		},
	})
	return c, a
}

// askThrough calls server-everything's sampling and elicitation triggers
// through cs, a session of a's client, and checks that the client was
// asked and that its answers (answer for sampling) came back in the results.
func (a *asked) askThrough(t *testing.T, ctx context.Context, cs *mcp.ClientSession, answer string) {
	t.Helper()
	text, isErr := goSDKCall(t, ctx, cs, "everything__trigger-sampling-request", map[string]any{"prompt": "what is 2+2"})
	if isErr || !strings.Contains(text, answer) {
		t.Errorf("sampling: %q (isError %v); want the client's answer in the result", text, isErr)
	}
	text, isErr = goSDKCall(t, ctx, cs, "everything__trigger-elicitation-request", map[string]any{})
	if isErr || !strings.Contains(text, "Ada Lovelace") {
		t.Errorf("elicitation: %q (isError %v); want the client's answer in the result", text, isErr)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !strings.Contains(a.sampled, "what is 2+2") {
		t.Errorf("the sampling request the client got: %q", a.sampled)
	}
	if a.elicited == "" {
		t.Error("the client's elicitation handler was never asked")
	}
}

// TestGoSDKServerRequests: what server-everything asks of the client in
// the middle of a call (sampling, elicitation) reaches the official Go
// SDK's handlers through the gateway and the answer gets back, and a
// long operation's progress arrives at the caller, in both eras.
func TestGoSDKServerRequests(t *testing.T) {
	r := startEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			c, a := askedClient("four, said the model")
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()

			a.askThrough(t, ctx, cs, "four, said the model")
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{
				Meta: mcp.Meta{"progressToken": "op-" + era},
				Name: "everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 4},
			})
			if err != nil || res.IsError {
				t.Fatalf("long operation: %+v, %v", res, err)
			}
			// A call the client gives up on is cancelled; the Go SDK then
			// sends notifications/cancelled (and roots/list_changed when
			// its roots change) without the _meta protocolVersion in the
			// 2026-07-28 era: the session must go on working.
			cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 5, "steps": 5}})
			ccancel()
			if err == nil {
				t.Error("a call cancelled after 300 ms of 5 s returned no error")
			}
			//lint:ignore SA1019 roots are deprecated from 2026-07-28 on, but clients still send their changes
			c.AddRoots(&mcp.Root{URI: "file:///tmp", Name: "tmp"})
			if text, isErr := goSDKCall(t, ctx, cs, "everything__echo", map[string]any{"message": "after the cancel"}); isErr || !strings.Contains(text, "after the cancel") {
				t.Errorf("the call after a cancelled one: %q (isError %v)", text, isErr)
			}
			// The Go SDK hands notifications to their handler on its own
			// goroutine: the last one may be handled after the result (on
			// a loaded machine, long after).
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				a.mu.Lock()
				n := len(a.progress)
				a.mu.Unlock()
				if n >= 4 || time.Now().After(deadline) {
					break
				}
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if len(a.progress) != 4 || a.progress[3] != 4 {
				t.Errorf("progress the client got: %v; want 1..4", a.progress)
			}
		})
	}
}

// TestGoSDKResourceSubscriptions: a session's resources/subscribe (a
// 2026-07-28 client: its subscriptions/listen stream) reaches
// server-everything, which then sends notifications/resources/updated every
// 5 s for what its own session subscribed to; the updates reach that client
// and not one that did not subscribe, and once the subscriber unsubscribes
// no more arrive.
func TestGoSDKResourceSubscriptions(t *testing.T) {
	r := startEverything(t)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			connect := func(updates *atomic.Int32) *mcp.ClientSession {
				c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
						if req.Params.URI == "demo://resource/dynamic/text/1" {
							updates.Add(1)
						}
					},
				})
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			var subscribed, bystander atomic.Int32
			sub := connect(&subscribed)
			connect(&bystander)
			if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://resource/dynamic/text/1"}); err != nil {
				t.Fatal(err)
			}
			// Each call flips server-everything's updates on or off.
			if _, isErr := goSDKCall(t, ctx, sub, "everything__toggle-subscriber-updates", map[string]any{}); isErr {
				t.Fatal("toggle-subscriber-updates failed")
			}
			defer goSDKCall(t, ctx, sub, "everything__toggle-subscriber-updates", map[string]any{})
			for deadline := time.Now().Add(15 * time.Second); subscribed.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			if subscribed.Load() == 0 {
				t.Fatal("no notifications/resources/updated reached the subscribed client in 15 s")
			}
			if n := bystander.Load(); n != 0 {
				t.Errorf("a client that did not subscribe got %d updates", n)
			}
			if err := sub.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "demo://resource/dynamic/text/1"}); err != nil {
				t.Fatal(err)
			}
			// The gateway unsubscribed everything: the next rounds (one
			// every 5 s, two at least in 11 s) send nothing. An update
			// already on its way may still land, however late a loaded
			// machine delivers it: one is allowed.
			after := subscribed.Load()
			time.Sleep(11 * time.Second)
			if n := subscribed.Load() - after; n > 1 {
				t.Errorf("%d updates arrived after the unsubscribe; want at most the one that may have been on its way", n)
			}
		})
	}
}

// startEverything serves server-everything (stdio, from npm) through a
// gateway, as the namespace everything, and waits until it is ready.
func startEverything(t *testing.T) *running {
	t.Helper()
	r := startEverythingWith(t, "", nil)
	r.waitReady(t, "everything")
	return r
}

// startEverythingWith is startEverything with more YAML after the servers
// (and its variables), not waiting for readiness.
func startEverythingWith(t *testing.T, more string, vars map[string]string) *running {
	t.Helper()
	everything := testenv.NodeServer(t, "server-everything")
	all := map[string]string{"CMD": everything[0]}
	maps.Copy(all, vars)
	return startGateway(t, `
servers:
  everything:
    command: ${CMD}
    args: `+jsonArgv(everything[1:])+`
`+more, all)
}
