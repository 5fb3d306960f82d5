package frontend

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestToolFromRaw checks the tool mcp-go is given: every member but the
// schemas decoded, the schemas kept as the source's bytes, and definitions
// mcp-go could not serve refused with a reason.
func TestToolFromRaw(t *testing.T) {
	raw := `{"name":"orig","title":"T","description":"D","_meta":{"k":1},` +
		`"inputSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}},` +
		`"outputSchema":{"type":"object","properties":{"r":{"type":"string"}}},` +
		`"annotations":{"readOnlyHint":true},"icons":[{"src":"https://x/i.png"}],"execution":{"taskSupport":"optional"}}`
	tool, err := toolFromRaw(&catalog.Item{Name: "ns__orig", Raw: json.RawMessage(raw)})
	if err != nil {
		t.Fatal(err)
	}
	if tool.Name != "ns__orig" || tool.Title != "T" || tool.Description != "D" || tool.Meta == nil ||
		tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint || len(tool.Icons) != 1 ||
		tool.Execution == nil || tool.Execution.TaskSupport != "optional" {
		t.Errorf("members not decoded: %+v", tool)
	}
	// Property order is the source's: the raw bytes, not a re-encode.
	if want := `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}}`; string(tool.RawInputSchema) != want {
		t.Errorf("RawInputSchema = %s, want %s", tool.RawInputSchema, want)
	}
	if want := `{"type":"object","properties":{"r":{"type":"string"}}}`; string(tool.RawOutputSchema) != want {
		t.Errorf("RawOutputSchema = %s, want %s", tool.RawOutputSchema, want)
	}
	if _, err := json.Marshal(tool); err != nil {
		t.Errorf("mcp-go cannot encode the tool: %v", err)
	}

	for _, c := range []struct{ name, raw, wantIn, wantErr string }{
		{"no input schema", `{"name":"x"}`, `{"type":"object"}`, ""},
		{"null schemas", `{"name":"x","inputSchema":null,"outputSchema":null}`, `{"type":"object"}`, ""},
		{"stray case-variant key", `{"name":"x","InputSchema":{"type":"object","properties":{"p":{"type":"string"}}},"inputSchema":{"type":"object"}}`, `{"type":"object"}`, ""},
		{"input schema not an object", `{"name":"x","inputSchema":5}`, "", "inputSchema is not a JSON object"},
		{"output schema not an object", `{"name":"x","outputSchema":"s"}`, "", "outputSchema is not a JSON object"},
		{"not JSON", `{"name":`, "", "not valid JSON"},
		{"not an object", `[1]`, "", "not a JSON object"},
		{"wrong member type", `{"name":"x","title":3}`, "", "cannot unmarshal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool, err := toolFromRaw(&catalog.Item{Name: "n", Raw: json.RawMessage(c.raw)})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(tool.RawInputSchema) != c.wantIn || tool.RawOutputSchema != nil {
				t.Errorf("schemas = %s / %s, want %s / none", tool.RawInputSchema, tool.RawOutputSchema, c.wantIn)
			}
			if _, err := json.Marshal(tool); err != nil {
				t.Errorf("mcp-go cannot encode the tool: %v", err)
			}
		})
	}
}

// An upstream tool whose x-mcp-header annotations mcp-go refuses (here on
// an object property) is not served; it must not take the front end down
// (mcp-go's AddTools panics on it) nor keep the source's other tools out.
func TestBadHeaderAnnotationNotServed(t *testing.T) {
	bad := `{"name":"bad","inputSchema":{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}}`
	dup := `{"name":"dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Same"},"b":{"type":"string","x-mcp-header":"Same"}}}}`
	good := `{"name":"good","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}}`
	var logged bytes.Buffer
	fe := New(echoRouter{}, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{
		Tools: []json.RawMessage{json.RawMessage(bad), json.RawMessage(dup), json.RawMessage(good)},
	}}}, catalog.Options{}))
	names := map[string]bool{}
	for _, tool := range fe.mcp.ListTools() {
		names[tool.Tool.Name] = true
	}
	if !names["s__good"] || names["s__bad"] || names["s__dup"] {
		t.Fatalf("tools registered with mcp-go: %v, want s__good without s__bad and s__dup", names)
	}
	// Each refused tool is named in the log, with mcp-go's reason.
	for _, want := range []string{`tool=s__bad err="property \"o\": x-mcp-header`, `tool=s__dup err=`} {
		if !strings.Contains(logged.String(), "tool definition not served") || !strings.Contains(logged.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logged.String())
		}
	}
}
