package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcErrorCase is one request whose upstream answers with a JSON-RPC
// error the client must get unchanged, or one the gateway refuses itself.
type rpcErrorCase struct {
	name, method, params string
	code                 int64
	message              string // the whole message (upstream) or a part of it (gateway)
	data                 string // the data's exact bytes; "" for none
	gateway              bool   // the gateway's own error: message is a part
	legacyOnly           bool   // resources/subscribe: sessions only
}

// rpcErrorCases are the requests of TestUpstreamRPCErrors, against the
// faultserver as server f.
var rpcErrorCases = []rpcErrorCase{
	{name: "tools/call", method: "tools/call",
		params: `{"name":"f__rpcerror","arguments":{"code":-32050,"message":"tool failed on purpose","data":"{\"tool\":\"rpcerror\",\"n\":1.50}"}}`,
		code:   -32050, message: "tool failed on purpose", data: `{"tool":"rpcerror","n":1.50}`},
	{name: "tools/call invalid params", method: "tools/call",
		params: `{"name":"f__rpcerror","arguments":{"code":-32602,"message":"bad arguments for rpcerror","data":"[1.50]"}}`,
		code:   -32602, message: "bad arguments for rpcerror", data: `[1.50]`},
	{name: "prompts/get", method: "prompts/get", params: `{"name":"f__p","arguments":{"code":"-32051"}}`,
		code: -32051, message: "prompt p failed on purpose", data: `{"prompt":"p","n":1.50}`},
	{name: "resources/read", method: "resources/read", params: `{"uri":"fault://fail/-32052"}`,
		code: -32052, message: "resources/read of fault://fail/-32052 failed on purpose", data: `{"uri":"fault://fail/-32052","n":1.50}`},
	{name: "resources/read internal", method: "resources/read", params: `{"uri":"fault://fail/-32603"}`,
		code: -32603, message: "resources/read of fault://fail/-32603 failed on purpose", data: `{"uri":"fault://fail/-32603","n":1.50}`},
	{name: "resources/subscribe", method: "resources/subscribe", params: `{"uri":"fault://fail/-32053"}`, legacyOnly: true,
		code: -32053, message: "resources/subscribe of fault://fail/-32053 failed on purpose", data: `{"uri":"fault://fail/-32053","n":1.50}`},
	// The gateway's own refusals keep their codes and say what is wrong.
	{name: "unknown tool", method: "tools/call", params: `{"name":"f__nosuch","arguments":{}}`,
		code: -32602, message: "f__nosuch", gateway: true},
	{name: "unknown prompt", method: "prompts/get", params: `{"name":"f__nosuch"}`,
		code: -32602, message: "f__nosuch", gateway: true},
}

// TestUpstreamRPCErrors: a JSON-RPC error an upstream answers a forwarded
// request with (tools/call, prompts/get, resources/read,
// resources/subscribe) reaches the client unchanged, code, message and
// data (to the byte), over HTTP in both protocol eras and over stdio; the
// gateway's own refusals keep their codes; and a tool's isError result
// stays a result.
func TestUpstreamRPCErrors(t *testing.T) {
	fault := goBuild(t, "./plugins/mcp/testdata/faultserver", "faultserver")
	yaml := "servers:\n  f:\n    command: " + fault + "\n    args: [-extras]\n"
	r := startGateway(t, yaml, nil)
	r.waitReady(t, "f")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	check := func(t *testing.T, tc rpcErrorCase, raw []byte) {
		t.Helper()
		var e struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("the error does not decode: %v: %s", err, raw)
		}
		if e.Code != tc.code {
			t.Errorf("code %d, want %d: %s", e.Code, tc.code, raw)
		}
		if tc.gateway {
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q does not name %q", e.Message, tc.message)
			}
			return
		}
		if e.Message != tc.message || string(e.Data) != tc.data {
			t.Errorf("error %s, want message %q and data %s", raw, tc.message, tc.data)
		}
	}

	for _, era := range []string{legacyVersion, modernVersion} {
		t.Run("http/"+era, func(t *testing.T) {
			c := newRawClient(t, ctx, r.url+"/mcp", era)
			for _, tc := range rpcErrorCases {
				if tc.legacyOnly && era == modernVersion {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					res, err := c.call(ctx, tc.method, tc.params)
					var re *rpcError
					if !errors.As(err, &re) {
						t.Fatalf("answer %s, %v; want a JSON-RPC error", res, err)
					}
					check(t, tc, re.raw)
				})
			}
			res, err := c.call(ctx, "tools/call", `{"name":"f__echo","arguments":{"text":"failed as a tool","isError":true}}`)
			if err != nil || !bytes.Contains(res, []byte(`"isError":true`)) {
				t.Errorf("a tool's isError result came back as %s, %v", res, err)
			}
		})
	}

	p, _ := startStdio(t, yaml)
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
		t.Fatalf("initialize over stdio: %v", err)
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		list, err := p.request(ctx, "tools/list", `{}`)
		if err == nil && bytes.Contains(list, []byte(`"f__rpcerror"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stdio gateway never listed f__rpcerror: %s, %v", list, err)
		}
	}
	for _, era := range []string{legacyVersion, modernVersion} {
		t.Run("stdio/"+era, func(t *testing.T) {
			for _, tc := range rpcErrorCases {
				if tc.legacyOnly && era == modernVersion {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					params := tc.params
					if era == modernVersion {
						params = withModernMeta(params)
					}
					res, err := p.request(ctx, tc.method, params)
					if err == nil {
						t.Fatalf("answer %s; want a JSON-RPC error", res)
					}
					_, raw, ok := strings.Cut(err.Error(), "JSON-RPC error ")
					if !ok {
						t.Fatalf("want a JSON-RPC error, got %v", err)
					}
					check(t, tc, []byte(raw))
				})
			}
		})
	}
}

// TestUpstreamRPCErrorsSDKClients: the official Go SDK and mcp-go's client
// see an upstream's JSON-RPC error as the upstream sent it, in both eras,
// on the calls they make (tools/call, prompts/get, resources/read).
func TestUpstreamRPCErrorsSDKClients(t *testing.T) {
	fault := goBuild(t, "./plugins/mcp/testdata/faultserver", "faultserver")
	r := startGateway(t, "servers:\n  f:\n    command: "+fault+"\n    args: [-extras]\n", nil)
	r.waitReady(t, "f")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, era := range []string{legacyVersion, modernVersion} {
		t.Run("go-sdk/"+era, func(t *testing.T) {
			cs := goSDKSession(t, ctx, r.url+"/mcp", era)
			check := func(what string, err error, code int64, msg, data string) {
				t.Helper()
				var we *jsonrpc.Error
				if !errors.As(err, &we) {
					t.Errorf("%s: %v, want a JSON-RPC error", what, err)
					return
				}
				if we.Code != code || we.Message != msg || string(we.Data) != data {
					t.Errorf("%s: error %d %q %s, want %d %q %s", what, we.Code, we.Message, we.Data, code, msg, data)
				}
			}
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "f__rpcerror", Arguments: map[string]any{
				"code": -32050, "message": "tool failed on purpose", "data": `{"n":1.50}`}})
			check("tools/call", err, -32050, "tool failed on purpose", `{"n":1.50}`)
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "f__p", Arguments: map[string]string{"code": "-32051"}})
			check("prompts/get", err, -32051, "prompt p failed on purpose", `{"prompt":"p","n":1.50}`)
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fault://fail/-32052"})
			check("resources/read", err, -32052, "resources/read of fault://fail/-32052 failed on purpose", `{"uri":"fault://fail/-32052","n":1.50}`)
			if era == legacyVersion {
				err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "fault://fail/-32053"})
				check("resources/subscribe", err, -32053, "resources/subscribe of fault://fail/-32053 failed on purpose", `{"uri":"fault://fail/-32053","n":1.50}`)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "f__echo", Arguments: map[string]any{"text": "failed as a tool", "isError": true}})
			if err != nil || !res.IsError {
				t.Errorf("a tool's isError result came back as %+v, %v", res, err)
			}
		})
	}

	for _, tc := range []struct {
		era  string
		opts []mcpgoclient.ClientOption
	}{
		{legacyVersion, []mcpgoclient.ClientOption{mcpgoclient.WithProtocolVersion(mcpgo.ProtocolVersion20251125)}},
		{modernVersion, nil},
	} {
		t.Run("mcp-go/"+tc.era, func(t *testing.T) {
			c, err := mcpgoclient.NewStreamableHttpClient(r.url + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			c = mcpgoclient.NewClient(c.GetTransport(), tc.opts...)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			init := mcpgo.InitializeRequest{}
			init.Params.ProtocolVersion = tc.era
			init.Params.ClientInfo = mcpgo.Implementation{Name: "skillgate-test", Version: "1"}
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			// mcp-go's client keeps the message of an error whose code it
			// has no error value for, and maps the standard codes to theirs.
			call := mcpgo.CallToolRequest{}
			call.Params.Name = "f__rpcerror"
			call.Params.Arguments = map[string]any{"code": -32050, "message": "tool failed on purpose"}
			if _, err := c.CallTool(ctx, call); err == nil || err.Error() != "tool failed on purpose" {
				t.Errorf("tools/call: %v, want the upstream's message", err)
			}
			call.Params.Arguments = map[string]any{"code": -32602, "message": "bad arguments"}
			if _, err := c.CallTool(ctx, call); !errors.Is(err, mcpgo.ErrInvalidParams) {
				t.Errorf("tools/call: %v, want invalid params", err)
			}
			get := mcpgo.GetPromptRequest{}
			get.Params.Name = "f__p"
			get.Params.Arguments = map[string]string{"code": "-32051"}
			if _, err := c.GetPrompt(ctx, get); err == nil || err.Error() != "prompt p failed on purpose" {
				t.Errorf("prompts/get: %v, want the upstream's message", err)
			}
			read := mcpgo.ReadResourceRequest{}
			read.Params.URI = "fault://fail/-32052"
			if _, err := c.ReadResource(ctx, read); err == nil || err.Error() != "resources/read of fault://fail/-32052 failed on purpose" {
				t.Errorf("resources/read: %v, want the upstream's message", err)
			}
			call.Params.Name = "f__echo"
			call.Params.Arguments = map[string]any{"text": "failed as a tool", "isError": true}
			if res, err := c.CallTool(ctx, call); err != nil || !res.IsError {
				t.Errorf("a tool's isError result came back as %+v, %v", res, err)
			}
		})
	}
}

// TestEverythingRPCErrors: server-everything's own JSON-RPC errors (a
// prompt called without its required argument, a dynamic resource whose
// id is not a number) reach a Go SDK client as the server sent them, in
// both eras.
func TestEverythingRPCErrors(t *testing.T) {
	r := startEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, era := range []string{legacyVersion, modernVersion} {
		t.Run(era, func(t *testing.T) {
			cs := goSDKSession(t, ctx, r.url+"/mcp", era)
			var we *jsonrpc.Error
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__args-prompt"})
			if !errors.As(err, &we) || we.Code != -32602 || !strings.Contains(we.Message, "Invalid arguments for prompt args-prompt") || strings.Contains(we.Message, "rpc error") {
				t.Errorf("prompts/get without city: %v, want server-everything's invalid params error as it is", err)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/text/abc"})
			if !errors.As(err, &we) || we.Code != -32603 || we.Message != "Unknown resource: demo://resource/dynamic/text/abc" {
				t.Errorf("resources/read of a non-numeric id: %v, want server-everything's error as it is", err)
			}
		})
	}
}
