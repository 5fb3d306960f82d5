package frontend

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// BenchmarkPublish is what a source's (re)load costs the front end: the
// catalog rebuilt with one upstream of 51 tools next to a small one, then
// Update. Even b.N iterations publish a changed small source, odd ones the
// same set again.
func BenchmarkPublish(b *testing.B) {
	big := benchTools(b)
	small := func(i int) catalog.Source {
		return catalog.Source{ID: "small", Namespace: "small", Executor: "x", Defs: sdk.Definitions{Tools: []json.RawMessage{
			json.RawMessage(`{"name":"t","description":"version ` + string(rune('a'+i%2)) + `","inputSchema":{"type":"object"}}`),
		}}}
	}
	fe := New(echoRouter{}, Options{})
	up := catalog.Source{ID: "up", Namespace: "up", Executor: "mcp", Defs: sdk.Definitions{Tools: big}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fe.Update(catalog.Build([]catalog.Source{up, small(i)}, catalog.Options{}))
	}
}

// BenchmarkFirstPublish is a source's first publish at start-up: a new
// front end, every tool converted and registered with mcp-go.
func BenchmarkFirstPublish(b *testing.B) {
	up := catalog.Source{ID: "up", Namespace: "up", Executor: "mcp", Defs: sdk.Definitions{Tools: benchTools(b)}}
	b.ReportAllocs()
	for b.Loop() {
		New(echoRouter{}, Options{}).Update(catalog.Build([]catalog.Source{up}, catalog.Options{}))
	}
}

// benchTools are 51 tool definitions shaped like the benchmark upstream's
// (bench/internal/fixture).
func benchTools(b *testing.B) []json.RawMessage {
	var big []json.RawMessage
	for i := range 51 {
		t := mcp.NewTool(fmt.Sprintf("tool_%03d", i),
			mcp.WithDescription("Reads the file at path, optionally a line range of it, and returns its contents."),
			mcp.WithString("path", mcp.Required(), mcp.Description("Absolute or workspace-relative path of the file to read.")),
			mcp.WithNumber("start_line", mcp.Description("First line to return, 1-based; default 1.")),
			mcp.WithNumber("end_line", mcp.Description("Last line to return, inclusive; default the end of the file.")),
			mcp.WithString("encoding", mcp.Enum("utf-8", "latin-1", "base64"), mcp.Description("How to decode the file.")),
			mcp.WithReadOnlyHintAnnotation(true),
		)
		raw, err := json.Marshal(t)
		if err != nil {
			b.Fatal(err)
		}
		big = append(big, raw)
	}
	return big
}
