package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestStdioServerEnvironment: a stdio server receives the proxy and TLS
// variables of the gateway's environment, and those its env_passthrough
// and executors.mcp.env_passthrough name (a prefix with *), but no other
// variable of the gateway's; a listed name that is not set is left out,
// and env: replaces a passed value. server-everything's get-env prints
// what it received.
func TestStdioServerEnvironment(t *testing.T) {
	argv := testenv.NodeServer(t, "server-everything")
	for k, v := range map[string]string{
		"HTTPS_PROXY":               "http://proxy.example:3128",
		"SSL_CERT_FILE":             "/etc/corp/ca.pem",
		"NODE_EXTRA_CA_CERTS":       "/etc/corp/extra.pem",
		"SKILLGATE_TEST_PASSED":     "passed",
		"SKILLGATE_TEST_PREFIX_ONE": "one",
		"SKILLGATE_TEST_DEFAULT":    "default",
		"SKILLGATE_TEST_REPLACED":   "from the gateway",
		"SKILLGATE_TEST_UNLISTED":   "unlisted",
	} {
		t.Setenv(k, v)
	}
	r := startGateway(t, "disclosure: all\n"+
		"executors: {mcp: {env_passthrough: [SKILLGATE_TEST_DEFAULT]}}\n"+
		"servers:\n  everything:\n    command: "+argv[0]+"\n    args: ["+strings.Join(argv[1:], ", ")+"]\n"+
		"    env_passthrough: [SKILLGATE_TEST_PASSED, SKILLGATE_TEST_PREFIX_*, SKILLGATE_TEST_UNSET, SKILLGATE_TEST_REPLACED]\n"+
		"    env: {SKILLGATE_TEST_REPLACED: from env}\n", nil)
	r.waitReady(t, "everything")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	res, err := c.call(ctx, "tools/call", `{"name":"everything__get-env","arguments":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	var env map[string]string
	if err := json.Unmarshal(res, &out); err != nil || len(out.Content) == 0 {
		t.Fatalf("get-env answered %s (%v)", res, err)
	}
	if err := json.Unmarshal([]byte(out.Content[0].Text), &env); err != nil {
		t.Fatalf("get-env printed %s: %v", out.Content[0].Text, err)
	}
	for k, want := range map[string]string{
		"HTTPS_PROXY": "http://proxy.example:3128", "SSL_CERT_FILE": "/etc/corp/ca.pem", "NODE_EXTRA_CA_CERTS": "/etc/corp/extra.pem",
		"SKILLGATE_TEST_PASSED": "passed", "SKILLGATE_TEST_PREFIX_ONE": "one", "SKILLGATE_TEST_DEFAULT": "default",
		"SKILLGATE_TEST_REPLACED": "from env",
	} {
		if env[k] != want {
			t.Errorf("the server has %s=%q; want %q", k, env[k], want)
		}
	}
	for _, k := range []string{"SKILLGATE_TEST_UNLISTED", "SKILLGATE_TEST_UNSET"} {
		if v, ok := env[k]; ok {
			t.Errorf("the server has %s=%q; want it absent", k, v)
		}
	}
}
