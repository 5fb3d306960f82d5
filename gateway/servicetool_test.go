package gateway_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// TestServiceWiredScriptTool: a script tool that requires a service gets
// its address (KV_HOST, KV_PORT) on the call that starts it, and talks to
// it; a client cannot inject those variables itself.
func TestServiceWiredScriptTool(t *testing.T) {
	testenv.Docker(t)
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	proj := fmt.Sprintf("gwtool%d", os.Getpid())
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	dir := t.TempDir()
	writeFolder(t, dir, "kvset", map[string]string{
		"tool.yaml": "name: kvset\ndescription: Store a value in the kv service and read it back.\nruntime: python\nentry: main.py\nrequires: [kv]\n" +
			"input_schema: {type: object, properties: {key: {type: string}, value: {type: string}}}\n",
		"main.py": `import json, os, socket, sys
args = json.load(sys.stdin)
s = socket.create_connection((os.environ["KV_HOST"], int(os.environ["KV_PORT"])), timeout=5)
f = s.makefile("rw")
f.write("SET %s %s\n" % (args["key"], args["value"])); f.flush(); f.readline()
f.write("GET %s\n" % args["key"]); f.flush()
print(json.dumps({"got": f.readline().strip(), "addr": os.environ["KV_HOST"] + ":" + os.environ["KV_PORT"]}))
`,
	})
	writeFolder(t, dir, "envpeek", map[string]string{
		"tool.yaml": "name: envpeek\ndescription: Show KV_HOST.\nruntime: python\nentry: main.py\n",
		"main.py":   "import os\nprint('KV_HOST=' + os.environ.get('KV_HOST', 'unset'))\n",
	})
	yaml := kvServiceYAML(proj, kvCtx) + fmt.Sprintf("tools: {dirs: [%s]}\n", dir)
	r := startGateway(t, yaml, nil)
	r.waitReady(t, "tool:kvset", "tool:envpeek")
	got, isErr := toolText(t, r, "tools__kvset", `{"key":"city","value":"Porto"}`)
	if isErr || !strings.Contains(got, `"got":"Porto"`) || !strings.Contains(got, "127.0.0.1:") {
		t.Fatalf("tools__kvset = %q (error %v); want the value read back from the service on 127.0.0.1", got, isErr)
	}

	// A client's own skillgate.dev/ _meta never reaches a tool, over
	// either of the front end's paths (a plain session's fast path, and
	// mcp-go's for a client declaring roots).
	ctx := t.Context()
	for _, gc := range []*goClient{newGoClient(t, ctx, r.url+"/mcp", legacy), newGoClient(t, ctx, r.url+"/mcp", "2026-07-28")} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "tools__envpeek"
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"skillgate.dev/env": map[string]string{"KV_HOST": "203.0.113.9"}}}
		res, err := gc.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if txt := resultText(res); res.IsError || !strings.Contains(txt, "KV_HOST=unset") {
			t.Errorf("a tool without requires, called with a client-sent skillgate.dev/env: %s", txt)
		}
	}
}
