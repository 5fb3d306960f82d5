package frontend

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// A 2026-07-28 call of a tool whose parameters are bound to headers
// (x-mcp-header, SEP-2243) must carry headers that agree with its
// arguments, however the annotation's key is spelled: mcp-go reads it as
// encoding/json does (case-insensitively, escapes decoded).
func TestParamHeadersChecked(t *testing.T) {
	spellings := map[string]string{
		"lower":   `"x-mcp-header"`,
		"upper":   `"X-MCP-Header"`,
		"escaped": `"x-mcp-h\u0065ader"`,
	}
	var tools []json.RawMessage
	for name, key := range spellings {
		tools = append(tools, json.RawMessage(`{"name":"`+name+`","inputSchema":{"type":"object","properties":{"r":{"type":"string",`+key+`:"Region"}}}}`))
	}
	fe := New(echoRouter{}, Options{})
	fe.Update(catalog.Build([]catalog.Source{{ID: "s", Namespace: "s", Executor: "x", Defs: sdk.Definitions{Tools: tools}}}, catalog.Options{}))
	ts := httptest.NewServer(fe.Handler())
	defer ts.Close()
	call := func(tool, header string) (int, string) {
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"s__` + tool + `","arguments":{"r":"eu"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "s__"+tool)
		if header != "" {
			req.Header.Set("Mcp-Param-Region", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for name := range spellings {
		t.Run(name, func(t *testing.T) {
			if code, body := call(name, "eu"); code != http.StatusOK || !strings.Contains(body, "tools/call") {
				t.Fatalf("matching header: %d %s", code, body)
			}
			for _, bad := range []string{"us", ""} {
				if code, body := call(name, bad); code == http.StatusOK && strings.Contains(body, `"result"`) {
					t.Fatalf("header %q for argument \"eu\" was accepted: %s", bad, body)
				}
			}
		})
	}
}
