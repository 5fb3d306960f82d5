package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestToolEnvOutOfProcess: the script executor runs out of process with a
// clean environment, so what a tool declares under env and secrets must
// come from the gateway's environment; nothing undeclared may.
func TestToolEnvOutOfProcess(t *testing.T) {
	needInterpreters(t, "python3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SKILLGATE_TEST_GREETING", "bonjour")
	t.Setenv("SKILLGATE_API_KEY", "s3cret-value")
	t.Setenv("SKILLGATE_CANARY", "canary-must-not-leak")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	dir := t.TempDir()
	writeFolder(t, dir, "envdump", map[string]string{
		"tool.yaml": "name: envdump\ndescription: Dump the environment.\nruntime: python\nentry: main.py\n" +
			"env: [SKILLGATE_TEST_GREETING]\nsecrets: [SKILLGATE_API_KEY]\n",
		"main.py": "import json, os\nprint(json.dumps(dict(os.environ)))\n",
	})
	r := startGateway(t, toolsConfig(dir, ""), nil)
	r.waitReady(t, "tool:envdump")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	res := gc.call(t, ctx, "tools__envdump", nil, nil)
	if res.IsError {
		t.Fatalf("envdump: %s", resultText(res))
	}
	var env map[string]string
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("structured result: %v (%s)", err, resultText(res))
	}
	for k, want := range map[string]string{
		"SKILLGATE_TEST_GREETING": "bonjour", "SKILLGATE_API_KEY": "s3cret-value", "HTTPS_PROXY": "http://proxy.invalid:3128",
	} {
		if env[k] != want {
			t.Errorf("%s = %q in the tool's environment, want %q", k, env[k], want)
		}
	}
	for k, v := range env {
		if strings.Contains(v, "canary-must-not-leak") {
			t.Errorf("the undeclared canary reached the tool as %s", k)
		}
	}
	if strings.Contains(r.log.String(), "s3cret-value") {
		t.Error("the secret's value appears in the gateway log")
	}
}
