package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// envBadDefs makes the test binary, run as a plugin (writeProbe), an
// executor that lists tool definitions the catalog cannot serve.
const envBadDefs = "SKILLGATE_GATEWAY_TEST_BAD_DEFS"

func init() {
	if os.Getenv(envBadDefs) != "" {
		sdk.Serve(badDefs{})
		os.Exit(0)
	}
}

// badDefs lists one good tool and four it should not.
type badDefs struct{}

func (badDefs) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "baddefs", Version: "1", Kinds: []string{"baddefs"}}, nil
}

func (badDefs) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	return sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"ok","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"x", "inputSchema":`),
		json.RawMessage(`[1,2]`),
		json.RawMessage(`{"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":5,"inputSchema":{"type":"object"}}`),
	}}, nil
}

func (badDefs) Unload(context.Context, string) error { return nil }

func (badDefs) Call(context.Context, sdk.CallRequest, sdk.Call) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

// A plugin's tool definition the catalog drops is logged once, with its
// index, its first bytes and what is wrong with it, and no other record
// tells of it.
func TestBadToolDefinitionsLogged(t *testing.T) {
	dir := t.TempDir()
	writeProbe(t, dir, "bad", envBadDefs+"=1 ")
	r := startGateway(t, "plugins: {dirs: ["+dir+"]}\n", nil)
	if st := r.waitReady(t, "bad"); st["bad"].Tools != 1 {
		t.Errorf("bad serves %d tools, want 1", st["bad"].Tools)
	}
	log := r.log.String()
	for _, want := range []string{
		`source=bad executor=bad index=1 problem="it is not valid JSON: unexpected end of JSON input" start="{\"name\":\"x\", \"inputSchema\":"`,
		`source=bad executor=bad index=2 problem="it is a JSON array, not an object" start=[1,2]`,
		`source=bad executor=bad index=3 problem="it has no \"name\""`,
		`source=bad executor=bad index=4 problem="its \"name\" is not a string"`,
	} {
		if n := strings.Count(log, want); n != 1 {
			t.Errorf("the log has %d lines with %s, want 1:\n%s", n, want, log)
		}
	}
	// Once each: the catalog's own record of a dropped definition, which
	// cannot tell them apart, is not logged as well.
	dropped := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "source=bad ") && strings.Contains(l, "dropped") {
			dropped++
		}
	}
	if dropped != 4 {
		t.Errorf("the log has %d records of a definition of bad dropped, want 4 (one per bad definition):\n%s", dropped, log)
	}
	if strings.Contains(log, "index=0") {
		t.Errorf("the good tool is logged as a problem:\n%s", log)
	}
}
