package gateway_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGivenUpPluginRestarts: a plugin file that never starts is run three
// times, then the plugin host gives up on it and refuses the gateway's
// next retries without running it. RESTARTS counts the runs after the
// first (2), not the refused retries.
func TestGivenUpPluginRestarts(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(t.TempDir(), "runs")
	script := "#!/bin/sh\necho run >> " + strconv.Quote(runs) + "\necho 'not a plugin' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "flaky"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := startGateway(t, "plugins: {dirs: ["+dir+"]}\n", nil)
	// Two retries after the host gave up (each logged, at Debug once the
	// error repeats).
	failures := func() int { return strings.Count(r.log.String(), `msg="source failed" source=flaky`) }
	deadline := time.Now().Add(60 * time.Second)
	for failures() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the source failed %d times in 60 s; want 5 (3 runs, 2 refused retries):\n%s", failures(), r.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	data, _ := os.ReadFile(runs)
	if n := strings.Count(string(data), "run"); n != 3 {
		t.Fatalf("the plugin file ran %d times; want 3 before the host gives up", n)
	}
	st := r.status(t)["flaky"]
	if !strings.Contains(st.LastError, "gave up") {
		t.Errorf("status does not say the host gave up: %+v", st)
	}
	if st.Restarts != 2 {
		t.Errorf("RESTARTS is %d after 3 runs and %d retries the host refused; want 2", st.Restarts, failures()-3)
	}
}
