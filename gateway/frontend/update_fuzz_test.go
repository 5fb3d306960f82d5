package frontend

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// FuzzUpdate feeds arbitrary bytes as an upstream's definitions, next to a
// good tool: publishing them must never panic (mcp-go panics on some tools
// it refuses), and the good tool stays served.
func FuzzUpdate(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x"}`,
		`{"name":"h","inputSchema":{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}}`,
		`{"name":"h","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"integer","x-mcp-header":"a"}}}}`,
		`{"name":"h","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}}`,
		`{"name":"h","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"bad header\n"}}}}`,
		`{"name":"n","inputSchema":{"type":"object","properties":{"p":{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q"}}}}}}`,
		`{"name":"p","arguments":[{"name":"a","required":true}]}`,
		`{"uri":"file:///a","name":"r","mimeType":3}`,
		`{"uriTemplate":"f://{x}","name":"t"}`,
		`{"name":"x","execution":{"taskSupport":"required"}}`,
		`{"name":"x","outputSchema":{"type":"array"}}`,
		`[1,2]`, `"name"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	good := json.RawMessage(`{"name":"good","inputSchema":{"type":"object"}}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := sdk.Definitions{
			Tools:             []json.RawMessage{raw, good},
			Prompts:           []json.RawMessage{raw},
			Resources:         []json.RawMessage{raw},
			ResourceTemplates: []json.RawMessage{raw},
		}
		fe := New(echoRouter{}, Options{})
		snap := catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: d}}, catalog.Options{})
		fe.Update(snap)
		fe.Update(catalog.Build(nil, catalog.Options{}))
		fe.Update(snap)
		if fe.mcp.GetTool("s__good") == nil {
			t.Fatalf("the good tool is not served next to %q", raw)
		}
	})
}

// FuzzHeaderPrefilter: mayBindHeaders never rules out a tool whose
// parameters mcp-go binds to headers.
func FuzzHeaderPrefilter(f *testing.F) {
	for _, key := range []string{`x-mcp-header`, `X-MCP-Header`, `x-Mcp-hEADER`, `x-mcp-h\u0065ader`, `\u0078-mcp-header`, `x-mcp-head`} {
		f.Add([]byte(`{"name":"h","inputSchema":{"type":"object","properties":{"a":{"type":"string","` + key + `":"A"},"p":{"type":"object","properties":{"q":{"type":"string","` + key + `":"Q"}}}}}}`))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tool, err := toolFromRaw(&catalog.Item{Name: "h", Raw: raw})
		if err != nil {
			return
		}
		if len(mcp.ExtractParamHeaderBindings(&tool)) > 0 && !mayBindHeaders(raw) {
			t.Fatalf("mcp-go binds headers of %q, but mayBindHeaders says it cannot", raw)
		}
	})
}
