// Package testenv finds and starts the real components skillgate's
// integration tests run against: the reference MCP servers from npm
// (server-everything, server-filesystem, server-memory), the MCP Inspector
// CLI, the MCP conformance suite, a Node 22 runtime, and mcp-go's conformance
// fixture server.
//
// scripts/test-deps.sh installs the components and scripts/test.sh exports
// where they are (SKILLGATE_NPM_DIR, SKILLGATE_CONFORMANCE_SERVER,
// SKILLGATE_NODE22). Without those variables the package looks in the
// repository (test/npm/node_modules, .cache/bin). A test that needs a missing
// component skips when the CI variable is unset and fails when it is set,
// because CI installs everything and a missing piece there is a bug.
//
// Every process started here runs in its own process group, is killed as a
// group in t.Cleanup, and has its output logged when the test failed.
// ChildPIDs and WaitNoChildren let a test assert that nothing was left behind.
//
//	func TestToolsList(t *testing.T) {
//		url := testenv.ConformanceServer(t)
//		out, err := testenv.Inspector(t, t.Context(), url, "--method", "tools/list")
//		if err != nil {
//			t.Fatal(err)
//		}
//		if !bytes.Contains(out, []byte("test_simple_text")) {
//			t.Errorf("tools/list = %s", out)
//		}
//	}
package testenv
