package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestFederation serves server-everything over stdio and over streamable
// HTTP and mcp-go's conformance server, all through one gateway, and drives
// it with MCP Inspector in both protocol eras.
func TestFederation(t *testing.T) {
	everything := testenv.NodeServer(t, "server-everything")
	everythingURL := testenv.EverythingHTTP(t)
	confURL := testenv.ConformanceServer(t)
	yaml := `
servers:
  everything:
    command: ` + jsonArgv(everything[:1]) + `
    args: ` + jsonArgv(everything[1:]) + `
  remote:
    url: ${EVERYTHING_URL}
  conformance:
    url: ${CONF_URL}
`
	yaml = strings.Replace(yaml, "command: [\""+everything[0]+"\"]", "command: \""+everything[0]+"\"", 1)
	r := startGateway(t, yaml, map[string]string{"EVERYTHING_URL": everythingURL, "CONF_URL": confURL})
	st := r.waitReady(t, "everything", "remote", "conformance")
	if st["everything"].PID == 0 {
		t.Errorf("stdio upstream has no pid in /readyz: %+v", st["everything"])
	}
	// The mcp executor runs as a plugin process whose calls ride its side
	// channel (protocol 3), and /readyz says so.
	var ready struct {
		Executors []gateway.ExecutorStatus `json:"executors"`
	}
	r.readyz(t, &ready)
	if e := ready.Executors; len(e) != 1 || e[0].Name != "mcp" || e[0].State != "running" || e[0].PID == 0 ||
		e[0].Protocol != sdk.ProtocolVersion || e[0].Calls != "socket" {
		t.Errorf("/readyz executors = %+v; want the mcp executor running, protocol %d, calls on the socket", e, sdk.ProtocolVersion)
	}
	mcpURL := r.url + "/mcp"

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			out, err := testenv.Inspector(t, ctx, mcpURL, "--protocol-era", era, "--method", "tools/list")
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var list struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(out, &list); err != nil {
				t.Fatalf("tools/list output: %v\n%s", err, out)
			}
			names := map[string]bool{}
			for _, tl := range list.Tools {
				names[tl.Name] = true
			}
			for _, want := range []string{"everything__echo", "remote__echo", "conformance__test_simple_text", "everything__get-structured-content"} {
				if !names[want] {
					t.Errorf("tools/list lacks %s (%d tools)", want, len(names))
				}
			}
			calls := []struct {
				tool string
				args []string
				want string
			}{
				{"everything__echo", []string{"message=hello " + era}, "Echo: hello " + era},
				{"remote__echo", []string{"message=via http"}, "Echo: via http"},
				{"conformance__test_simple_text", nil, "This is a simple text response for testing."},
				{"everything__get-sum", []string{"a=20", "b=22"}, "42"},
			}
			for _, c := range calls {
				args := []string{mcpURL, "--protocol-era", era, "--method", "tools/call", "--tool-name", c.tool}
				for _, a := range c.args {
					args = append(args, "--tool-arg", a)
				}
				out, err := testenv.Inspector(t, ctx, args...)
				if err != nil {
					t.Errorf("call %s: %v", c.tool, err)
					continue
				}
				if !strings.Contains(string(out), c.want) {
					t.Errorf("call %s: output lacks %q:\n%s", c.tool, c.want, out)
				}
			}
		})
	}
}

// TestBrokenServerDoesNotStopOthers starts a server that cannot start next to
// a healthy one.
func TestBrokenServerDoesNotStopOthers(t *testing.T) {
	confURL := testenv.ConformanceServer(t)
	r := startGateway(t, `
servers:
  broken:
    command: /nonexistent/mcp-server
  conformance:
    url: ${CONF_URL}
`, map[string]string{"CONF_URL": confURL})
	r.waitReady(t, "conformance")
	st := r.status(t)
	if st["broken"].State == "ready" || st["broken"].LastError == "" {
		t.Fatalf("broken server: %+v; want a failed state with its reason", st["broken"])
	}
	if !strings.Contains(st["broken"].LastError, "/nonexistent/mcp-server") {
		t.Errorf("last error does not name the command: %q", st["broken"].LastError)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.gw.CallTool(ctx, "conformance__test_simple_text", json.RawMessage(`{}`), nil)
	if err != nil || !strings.Contains(string(res), "simple text") {
		t.Fatalf("healthy server call: %s, %v", res, err)
	}
}

// TestFederationExample serves examples/federation/skillgate.yaml as a user
// would (with the conformance server's URL from the environment) and lists
// and calls namespaced tools of both servers with MCP Inspector.
func TestFederationExample(t *testing.T) {
	root := testenv.RepoRoot(t)
	testenv.NodeServer(t, "server-everything") // the example's npm dependency must be installed
	path := filepath.Join(root, "examples", "federation", "skillgate.yaml")
	yaml, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := startGatewayNamed(t, path, string(yaml), map[string]string{"CONFORMANCE_URL": testenv.ConformanceServer(t)})
	r.waitReady(t, "everything", "conformance")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := testenv.Inspector(t, ctx, r.url+"/mcp", "--method", "tools/list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"everything__echo"`, `"conformance__test_simple_text"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	out, err = testenv.Inspector(t, ctx, r.url+"/mcp", "--method", "tools/call", "--tool-name", "everything__echo", "--tool-arg", "message=federated")
	if err != nil || !strings.Contains(string(out), "Echo: federated") {
		t.Errorf("everything__echo: %s %v", out, err)
	}
	out, err = testenv.Inspector(t, ctx, r.url+"/mcp", "--method", "tools/call", "--tool-name", "conformance__test_simple_text")
	if err != nil || !strings.Contains(string(out), "simple text response") {
		t.Errorf("conformance__test_simple_text: %s %v", out, err)
	}
}
