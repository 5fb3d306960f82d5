package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestCatalogSaysWhatItChanged: a plugin lists a tool whose name has
// characters LLM APIs refuse, a tool twice, and a tool without an
// inputSchema. Each is logged once, at WARN, naming the source and the
// tool and what to fix; the tool without a schema reaches MCP Inspector
// with {"type":"object"}; the source's tool count is what the catalog
// serves, not what the plugin listed.
func TestCatalogSaysWhatItChanged(t *testing.T) {
	dir := t.TempDir()
	extra := `[{"name":"bad name!/x","inputSchema":{"type":"object"}},` +
		`{"name":"crunch","inputSchema":{"type":"object"}},{"name":"crunch","description":"again","inputSchema":{"type":"object"}},` +
		`{"name":"noschema","description":"No schema."}]`
	writeProbe(t, dir, "acme", envExtraTools+"="+strconv.Quote(extra)+" ")
	r := startGateway(t, "plugins: {dirs: ["+dir+"]}\n", nil)
	st := r.waitReady(t, "acme")["acme"]

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := testenv.Inspector(t, ctx, r.url+"/mcp", "--method", "tools/list")
	if err != nil {
		t.Fatalf("inspector tools/list: %v\n%s", err, out)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("inspector output: %v\n%s", err, out)
	}
	schemas := map[string]string{}
	served := 0
	for _, tl := range list.Tools {
		var b bytes.Buffer
		_ = json.Compact(&b, tl.InputSchema)
		schemas[tl.Name] = b.String()
		if strings.HasPrefix(tl.Name, "acme__") {
			served++
		}
	}
	if got := schemas["acme__noschema"]; got != `{"type":"object"}` {
		t.Errorf("acme__noschema reaches Inspector with inputSchema %q; want {\"type\":\"object\"} (tools: %v)", got, schemas)
	}
	if _, ok := schemas["acme__bad_name__x"]; !ok {
		t.Errorf("the renamed tool is not listed as acme__bad_name__x: %v", schemas)
	}
	if st.Tools != served || served != 7 {
		t.Errorf("status says acme has %d tools; the catalog serves %d (want 7: the probe's 4, bad name, crunch once, noschema)", st.Tools, served)
	}

	log := r.log.String()
	for _, want := range []string{
		`source acme: tool name \"bad name!/x\" is not a valid name`,
		`it is served as acme__bad_name__x: rename it in the source`,
		`source acme listed tool crunch twice; the second is dropped`,
		`source acme: tool noschema has no inputSchema`,
		`it is served with {\"type\":\"object\"}: give it an inputSchema in the source`,
	} {
		if n := strings.Count(log, want); n != 1 {
			t.Errorf("the log has %q %d times; want once:\n%s", want, n, log)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "source acme") && !strings.Contains(line, "level=WARN") {
			t.Errorf("not at WARN: %s", line)
		}
		if strings.Contains(line, "name collision") {
			t.Errorf("a source's own problem is logged as a collision: %s", line)
		}
	}
}
