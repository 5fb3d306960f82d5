package gateway_test

import (
	"slices"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestConformanceThroughGateway runs the MCP conformance suite's active
// server scenarios against the gateway fronting mcp-go's conformance server
// without a prefix: every check that passes against the bare server must
// pass through the gateway, sampling and elicitation included.
func TestConformanceThroughGateway(t *testing.T) {
	upstream := testenv.ConformanceServer(t)
	r := startGateway(t, `
servers:
  conformance:
    url: ${URL}
    namespace: ""
`, map[string]string{"URL": upstream})
	r.waitReady(t, "conformance")
	url := r.url + "/mcp"

	outDir := t.TempDir()
	code, output := testenv.RunConformance(t, t.Context(), url, "", outDir)
	results, err := testenv.ReadConformance(outDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, output)
	}
	passed, failed := 0, 0
	for _, res := range results {
		passed += res.Passed
		failed += res.Failed
	}
	t.Logf("conformance suite through the gateway: %d scenarios, %d checks passed, %d failed (exit %d)", len(results), passed, failed, code)
	if len(results) != 30 || passed+failed != 39 {
		t.Errorf("got %d scenarios and %d checks, want 30 and 39\n%s", len(results), passed+failed, output)
	}
	for _, scenario := range testenv.FailedScenarios(results) {
		if !slices.Contains(testenv.KnownRacyScenarios, scenario) {
			for _, res := range results {
				if res.Scenario == scenario {
					t.Errorf("scenario %s failed through the gateway: %v", scenario, res.Errors)
				}
			}
			continue
		}
		// The upstream (bare mcp-go) can drop its last notification before a
		// result (mcp-go #969); the gateway itself never does (see
		// frontend.TestNotificationsBeforeResultAreNeverLost). Such a
		// scenario must pass on a retry.
		const tries = 30 // the upstream drops the notification in most calls under load
		ok := false
		for i := range tries {
			if c, out := testenv.ConformanceScenario(t, t.Context(), url, scenario, ""); c == 0 {
				t.Logf("racy scenario %s passed on retry %d", scenario, i+1)
				ok = true
				break
			} else {
				t.Logf("retry %d of %s: exit %d\n%s", i+1, scenario, c, out)
			}
		}
		if !ok {
			t.Errorf("scenario %s failed %d retries in a row", scenario, tries)
		}
	}
}
