package frontend

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestListChangedHeldWhileStarting: a client (mcp-go's, over HTTP with
// its standalone GET stream and over stdio) that initializes while the
// gateway starts gets no list_changed for the catalog changes of the
// start: it listed nothing yet, and its first lists are answered with the
// catalog as the gate opens. After a list of its own, changes of that
// kind are told as usual; a kind it never listed is not told.
func TestListChangedHeldWhileStarting(t *testing.T) {
	// snap has tools (and resources) named by tools, and prompts named by
	// prompts.
	snap := func(tools, prompts []string) *catalog.Snapshot {
		var defs sdk.Definitions
		for _, name := range tools {
			defs.Tools = append(defs.Tools, json.RawMessage(`{"name":"`+name+`","inputSchema":{"type":"object"}}`))
			defs.Resources = append(defs.Resources, json.RawMessage(`{"uri":"demo://`+name+`","name":"`+name+`"}`))
		}
		for _, name := range prompts {
			defs.Prompts = append(defs.Prompts, json.RawMessage(`{"name":"`+name+`"}`))
		}
		return catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: defs}}, catalog.Options{})
	}
	ab, abc := []string{"a", "b"}, []string{"a", "b", "c"}
	const marker = "notifications/skillgate-test/marker"
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			serving := make(chan struct{})
			fe := New(echoRouter{}, Options{Serving: serving})
			var tr mcptransport.Interface
			switch transport {
			case "http":
				ts := httptest.NewServer(fe.Handler())
				defer ts.Close()
				//lint:ignore SA1019 a 2025-11-25 client listens on its GET stream
				h, err := mcptransport.NewStreamableHTTP(ts.URL+"/mcp", mcptransport.WithContinuousListening())
				if err != nil {
					t.Fatal(err)
				}
				tr = h
			case "stdio":
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = fe.ServeStdio(ctx, inR, outW)
					outW.Close()
				}()
				defer func() { inW.Close(); <-done }()
				tr = mcptransport.NewIO(outR, inW, nil)
			}
			cs := mcpgoclient.NewClient(tr, mcpgoclient.WithProtocolVersion(mcpgo.ProtocolVersion20251125))
			if err := cs.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			notes := make(chan string, 64)
			cs.OnNotification(func(n mcpgo.JSONRPCNotification) {
				if kind, ok := strings.CutSuffix(strings.TrimPrefix(n.Method, "notifications/"), "/list_changed"); ok {
					notes <- kind
				} else if n.Method == marker {
					notes <- marker
				}
			})
			init := mcpgo.InitializeRequest{}
			init.Params.ProtocolVersion = mcpgo.ProtocolVersion20251125
			init.Params.ClientInfo = mcpgo.Implementation{Name: "skillgate-test", Version: "1"}
			if _, err := cs.Initialize(ctx, init); err != nil {
				t.Fatal(err)
			}
			//lint:ignore SA1019 2025-11-25 clients ping; it is answered while starting
			if err := cs.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			// until sends the marker and returns the kinds of list_changed
			// received before it.
			until := func() []string {
				t.Helper()
				fe.Notify(marker, nil)
				var got []string
				for {
					select {
					case n := <-notes:
						if n == marker {
							return got
						}
						got = append(got, n)
					case <-ctx.Done():
						t.Fatalf("the marker did not come; got %q", got)
					}
				}
			}

			// The client listens (over HTTP: its GET stream is open, as
			// the marker came through it).
			if got := until(); len(got) != 0 {
				t.Errorf("list_changed before any change: %q", got)
			}
			// The start: sources load one after the other.
			fe.Update(snap([]string{"a"}, []string{"a"}))
			fe.Update(snap(ab, ab))
			if got := until(); len(got) != 0 {
				t.Errorf("list_changed while the gateway starts, before the client listed anything: %q; want none", got)
			}
			close(serving)
			res, err := cs.ListTools(ctx, mcpgo.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "s__b") {
				t.Errorf("first tools/list: %v; want the catalog as the gate opened", names)
			}
			// A change after the client listed tools is told; prompts and
			// resources, which it did not list, are not. What the gateway
			// sent before the marker reaches the client before it.
			fe.Update(snap(abc, ab))
			if got := until(); !slices.Equal(got, []string{"tools"}) {
				t.Errorf("list_changed after the start and a change of tools: %q; want only tools (none for the start, none for lists never asked for)", got)
			}
			if _, err := cs.ListPrompts(ctx, mcpgo.ListPromptsRequest{}); err != nil {
				t.Fatal(err)
			}
			fe.Update(snap(abc, abc))
			if got := until(); !slices.Equal(got, []string{"prompts"}) {
				t.Errorf("list_changed after a change of prompts, once listed: %q; want prompts", got)
			}
		})
	}
}
