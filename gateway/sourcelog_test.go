package gateway_test

import (
	"strings"
	"testing"
	"time"
)

// A server that keeps failing the same way is logged at Error once, and
// at Debug at each retry after; one whose error changes is logged at
// Error each time it does.
func TestRetriedFailureLoggedOnce(t *testing.T) {
	r := startGateway(t, `servers:
  same:
    command: sh
    args: ["-c", "echo cannot open the database >&2; exit 3"]
  changing:
    command: sh
    args: ["-c", "echo attempt $$$$ >&2; exit 3"]
`, nil)
	deadline := time.Now().Add(30 * time.Second)
	for r.status(t)["same"].Restarts < 3 || r.status(t)["changing"].Restarts < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 3 retries of each server in 30 s: %+v", r.status(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	count := func(level, source string) int {
		return strings.Count(r.log.String(), `level=`+level+` msg="source failed to load" source=`+source+` `)
	}
	if e, d := count("ERROR", "same"), count("DEBUG", "same"); e != 1 || d < 3 {
		t.Errorf("the same failure: %d records at Error and %d at Debug; want 1 and at least 3:\n%s", e, d, r.log.String())
	}
	if e := count("ERROR", "changing"); e < 4 {
		t.Errorf("a failure that changes: %d records at Error; want one for each of its 4 or more tries:\n%s", e, r.log.String())
	}
}
