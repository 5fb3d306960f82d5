package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends one JSON-RPC message and returns the answer's JSON (the last
// data line of an SSE answer) and the response headers.
func post(t *testing.T, url string, headers map[string]string, body string) ([]byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		for _, l := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
				last = d
			}
		}
		b = last
	}
	return b, resp.Header
}

// TestSkillsExtension: the gateway announces the skills extension and
// answers skills/list and skills/get in both protocol eras.
func TestSkillsExtension(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "../examples/skills", dir)
	r := startGateway(t, "skills: {dirs: ["+dir+"]}\n", nil)
	r.waitReady(t)
	url := r.url + "/mcp"

	init, h := post(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}},"clientInfo":{"name":"t","version":"1"}}}`)
	if !strings.Contains(string(init), `"io.modelcontextprotocol/skills"`) {
		t.Fatalf("initialize does not announce the skills extension: %s", init)
	}
	legacy := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	modern := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "skills/list"}
	for era, hdr := range map[string]map[string]string{"legacy": legacy, "modern": modern} {
		params := `{}`
		if era == "modern" {
			params = `{` + meta + `}`
		}
		out, _ := post(t, url, hdr, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":`+params+`}`)
		var list struct {
			Result struct {
				Skills []struct {
					Name string `json:"name"`
					URI  string `json:"uri"`
				} `json:"skills"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &list); err != nil || len(list.Result.Skills) < 4 {
			t.Fatalf("%s skills/list: %v %s", era, err, out)
		}
		var uri string
		for _, s := range list.Result.Skills {
			if strings.Contains(s.URI, "csv-insights") {
				uri = s.URI
			}
		}
		if uri == "" {
			t.Fatalf("%s skills/list lacks csv-insights: %s", era, out)
		}
		gh := map[string]string{}
		for k, v := range hdr {
			gh[k] = v
		}
		getParams := `{"uri":` + jsonString(uri) + `}`
		if era == "modern" {
			gh["Mcp-Method"] = "skills/get"
			getParams = `{"uri":` + jsonString(uri) + `,` + meta + `}`
		}
		got, _ := post(t, url, gh, `{"jsonrpc":"2.0","id":3,"method":"skills/get","params":`+getParams+`}`)
		if !strings.Contains(string(got), "csv") || strings.Contains(string(got), `"error"`) {
			t.Errorf("%s skills/get %s: %s", era, uri, got)
		}
		if era == "modern" && !strings.Contains(string(got), `"io.modelcontextprotocol/serverInfo"`) {
			t.Errorf("modern skills/get lacks the serverInfo _meta: %s", got)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
