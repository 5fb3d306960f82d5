package gateway_test

import (
	"strings"
	"testing"
	"time"
)

// TestStdioEnvFromVariableMasked: a stdio server prints its environment
// and fails at start. The value the config gave its env as ${VAR}, under a
// name that does not look like a credential, stays out of /readyz and the
// gateway's log; a literal value still shows.
func TestStdioEnvFromVariableMasked(t *testing.T) {
	const secret, plain = "dsn-SECRET-abcdef", "plain-value-visible"
	fault := goBuild(t, "./plugins/mcp/testdata/faultserver", "faultserver")
	r := startGateway(t, `
servers:
  f:
    command: ${FAULT}
    args: [-echo-env, "UPSTREAM_DSN,FAULT_ENV", -exit-at-start]
    env: {UPSTREAM_DSN: "${DSN}", FAULT_ENV: `+plain+`}
`, map[string]string{"FAULT": fault, "DSN": secret})
	var lastErr string
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(lastErr, "FAULT_ENV="); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no last error with the server's stderr: %+v", r.status(t)["f"])
		}
		lastErr = r.status(t)["f"].LastError
	}
	if strings.Contains(lastErr, "dsn-SECRET") || !strings.Contains(lastErr, "FAULT_ENV="+plain) {
		t.Errorf("/readyz last_error = %q; want the ${VAR} value masked, the literal shown", lastErr)
	}
	if logs := r.log.String(); strings.Contains(logs, "dsn-SECRET") || !strings.Contains(logs, "FAULT_ENV="+plain) {
		t.Errorf("the gateway log shows the ${VAR} value or misses the literal:\n%s", logs)
	}
}
