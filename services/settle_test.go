package services_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/services"
)

// TestDockerNoHealthcheckMustStayUp: a service without a health check
// whose container exits right after it started fails its start with the
// exit code and the container's last output, instead of passing for ready
// until the next check; one that stays up is ready.
func TestDockerNoHealthcheckMustStayUp(t *testing.T) {
	none := &services.Healthcheck{Test: []string{"NONE"}}
	crash := kvSpec(t, "crash")
	crash.Healthcheck = none
	crash.Env = map[string]string{"KV_EXIT": "3", "KV_EXIT_AFTER": "300ms"}
	up := kvSpec(t, "up")
	up.Healthcheck = none
	m := newManager(t, project(t), crash, up)

	_, err := m.Ensure(t.Context(), "crash")
	if !errors.Is(err, services.ErrUnhealthy) || !strings.Contains(err.Error(), "code 3") || !strings.Contains(err.Error(), "as KV_EXIT asks") {
		t.Fatalf("Ensure of a service that exits 300ms after it started: %v; want ErrUnhealthy with the exit code and the last output", err)
	}
	t.Log(err)
	env, err := m.Ensure(t.Context(), "up")
	if err != nil {
		t.Fatalf("Ensure of a service without a health check that stays up: %v", err)
	}
	kvRoundTrip(t, env["UP_HOST"], env["UP_PORT"])
}

// TestDockerSilentHealthCheck: a health check that passes and prints
// nothing is shown as "exit 0", not "exit 0:" with nothing after it.
func TestDockerSilentHealthCheck(t *testing.T) {
	quiet := kvSpec(t, "quiet")
	quiet.Healthcheck = &services.Healthcheck{Test: []string{"CMD", "/kv", "quiet"}, Interval: 200 * time.Millisecond, Retries: 3}
	m := newManager(t, project(t), quiet)
	if _, err := m.Ensure(t.Context(), "quiet"); err != nil {
		t.Fatal(err)
	}
	st, err := m.Status(t.Context(), "quiet")
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].HealthLog != "exit 0" {
		t.Fatalf("status: %+v; want health_log \"exit 0\"", st)
	}
}
