package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestSubscribeUnknownResource: a subscription to a URI that no source
// lists and no resource template matches is refused as resource not
// found, with the URI in the error's data — -32002 for a 2025-11-25
// session's resources/subscribe (mcp-go's and the Go SDK's clients), and
// invalid params for a 2026-07-28 subscriptions/listen (mcp-go's client)
// — and no source is asked. A listed resource, a URI of a template and a
// skill file (skill://{+path}) are still subscribed at their source.
func TestSubscribeUnknownResource(t *testing.T) {
	sr := &subRouter{}
	fe := New(sr, Options{})
	fe.Update(catalog.Build([]catalog.Source{
		{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
			Resources:         []json.RawMessage{json.RawMessage(`{"uri":"demo://doc","name":"doc"}`)},
			ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"demo://item/{id}","name":"item"}`)},
		}},
		{ID: "skills", Namespace: "skills", Executor: "x", Defs: sdk.Definitions{
			ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"skill://{+path}","name":"skill-file"}`)},
		}},
	}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	url := ts.URL + "/mcp"
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const unknown = "demo://nowhere/1"
	served := []string{"demo://doc", "demo://item/7", "skill://pdf/SKILL.md"}
	// asked is what the sources were asked about uri since the last look
	// (they may also hear an earlier subtest's session end meanwhile).
	asked := func(uri string) []string {
		return slices.DeleteFunc(sr.take(), func(s string) bool { return !strings.HasSuffix(s, " "+uri) })
	}
	wantData := func(t *testing.T, data json.RawMessage) {
		t.Helper()
		var d struct{ URI string }
		if json.Unmarshal(data, &d) != nil || d.URI != unknown {
			t.Errorf("the error's data: %s; want {\"uri\":%q}", data, unknown)
		}
	}

	t.Run("mcp-go/2025-11-25", func(t *testing.T) {
		c := startMCPGoClient(t, ctx, url, mcpgo.ProtocolVersion20251125)
		sub := mcpgo.SubscribeRequest{}
		sub.Params.URI = unknown
		//lint:ignore SA1019 resources/subscribe is the 2025-11-25 way
		if err := c.Subscribe(ctx, sub); !errors.Is(err, mcpgo.ErrResourceNotFound) {
			t.Errorf("subscribe %s: %v; want resource not found (-32002)", unknown, err)
		}
		if got := asked(unknown); len(got) != 0 {
			t.Errorf("subscribe %s: sources asked %q", unknown, got)
		}
		for _, uri := range served {
			sub.Params.URI = uri
			//lint:ignore SA1019 see above
			if err := c.Subscribe(ctx, sub); err != nil {
				t.Errorf("subscribe %s: %v", uri, err)
			}
			if got := asked(uri); !slices.Equal(got, []string{"resources/subscribe " + uri}) {
				t.Errorf("subscribe %s: sources got %q", uri, got)
			}
		}
	})

	t.Run("go-sdk/2025-11-25", func(t *testing.T) {
		c := gosdk.NewClient(&gosdk.Implementation{Name: "skillgate-test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		err = cs.Subscribe(ctx, &gosdk.SubscribeParams{URI: unknown})
		var re *jsonrpc.Error
		if !errors.As(err, &re) || re.Code != mcpgo.RESOURCE_NOT_FOUND {
			t.Fatalf("subscribe %s: %v; want a JSON-RPC error %d", unknown, err, mcpgo.RESOURCE_NOT_FOUND)
		}
		wantData(t, re.Data)
		if got := asked(unknown); len(got) != 0 {
			t.Errorf("subscribe %s: sources asked %q", unknown, got)
		}
		if err := cs.Subscribe(ctx, &gosdk.SubscribeParams{URI: "demo://item/8"}); err != nil {
			t.Errorf("subscribe demo://item/8: %v", err)
		}
		if got := asked("demo://item/8"); !slices.Equal(got, []string{"resources/subscribe demo://item/8"}) {
			t.Errorf("subscribe demo://item/8: sources got %q", got)
		}
	})

	t.Run("mcp-go/2026-07-28", func(t *testing.T) {
		c := startMCPGoClient(t, ctx, url, "")
		// A stream asking for a served URI and an unknown one is refused
		// whole, and the served one's subscription undone.
		err := c.Listen(ctx, mcpgo.SubscriptionFilter{ResourceSubscriptions: []string{"demo://item/9", unknown}})
		if !errors.Is(err, mcpgo.ErrInvalidParams) || !strings.Contains(err.Error(), unknown) {
			t.Errorf("subscriptions/listen to %s: %v; want invalid params naming the URI", unknown, err)
		}
		if got := asked("demo://item/9"); !slices.Equal(got, []string{"resources/subscribe demo://item/9", "resources/unsubscribe demo://item/9"}) {
			t.Errorf("subscriptions/listen refused: sources got %q", got)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		c := serveStdio(t, fe)
		c.write(t, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"`+unknown+`"}}`)
		line := c.answer(t, "2")
		var answer struct {
			Error *struct {
				Code int64           `json:"code"`
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(line), &answer) != nil || answer.Error == nil || answer.Error.Code != mcpgo.RESOURCE_NOT_FOUND {
			t.Fatalf("subscribe %s over stdio: %s", unknown, line)
		}
		wantData(t, answer.Error.Data)
	})
}

// startMCPGoClient starts and initializes an mcp-go streamable HTTP
// client of url; era "" is mcp-go's default (2026-07-28).
func startMCPGoClient(t *testing.T, ctx context.Context, url, era string) *mcpgoclient.Client {
	t.Helper()
	tr, err := mcpgoclient.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	var opts []mcpgoclient.ClientOption
	if era != "" {
		opts = append(opts, mcpgoclient.WithProtocolVersion(era))
	}
	c := mcpgoclient.NewClient(tr.GetTransport(), opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = era
	if era == "" {
		init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "skillgate-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}
