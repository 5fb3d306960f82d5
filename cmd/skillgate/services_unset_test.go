package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// TestServicesUnsetSecrets: the services commands need only the variables
// of the services: section. With an auth token's and a server's env's
// variables unset, up, ls, status, logs and down work and say nothing of
// them; with one unset inside a service's definition, up of that service
// fails naming it at file:line, up of another service and ls warn, and
// down stays quiet.
func TestServicesUnsetSecrets(t *testing.T) {
	const token, serverSecret, kvSecret = "SG_TEST_UNSET_TOKEN", "SG_TEST_UNSET_SERVER", "SG_TEST_UNSET_KV"
	for _, v := range []string{token, serverSecret, kvSecret} {
		t.Setenv(v, "")
		os.Unsetenv(v) // t.Setenv restores the environment afterwards
	}
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	proj := fmt.Sprintf("unset%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	dir := t.TempDir()
	write := func(name, kvEnv string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		cfg := fmt.Sprintf(`docker: {project: %s}
services:
  kv:
    image: skillgate-test/kv:cli
    build: {context: %s}
    ports: ["6379"]
    healthcheck: {test: [CMD, /kv, health], interval: 200ms}
    env: {%s}
  other:
    image: skillgate-test/kv:cli
    build: {context: %s}
    healthcheck: {test: [CMD, /kv, health], interval: 200ms}
servers:
  notes: {command: node, env: {API_KEY: "${%s}"}}
auth: {tokens: ["${%s}"]}
`, proj, kvCtx, kvEnv, kvCtx, serverSecret, token)
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	clean := write("clean.yaml", "MODE: test")
	t.Cleanup(func() {
		runCLI(t, "-c", clean, "services", "down")
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	quiet := func(args ...string) string {
		t.Helper()
		out, stderr, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args[2:], " "), err, stderr)
		}
		for _, v := range []string{token, serverSecret} {
			if strings.Contains(stderr, v) {
				t.Errorf("%s speaks of %s:\n%s", strings.Join(args[2:], " "), v, stderr)
			}
		}
		return out
	}

	quiet("-c", clean, "services", "up", "kv")
	if out := quiet("-c", clean, "services", "ls"); !strings.Contains(out, "healthy") {
		t.Errorf("ls = %q, want kv healthy", out)
	}
	if out := quiet("-c", clean, "services", "status", "kv"); !strings.Contains(out, "healthy") {
		t.Errorf("status = %q, want kv healthy", out)
	}
	quiet("-c", clean, "services", "logs", "--tail", "3", "kv")
	quiet("-c", clean, "services", "down")
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 0 {
		t.Errorf("containers after down: %v", got)
	}

	// The service's own variable: up of kv fails before any container.
	secret := write("secret.yaml", `KV_PASSWORD: "${`+kvSecret+`}"`)
	where := secret + ":8:24: services.kv.env.KV_PASSWORD: undefined variable ${" + kvSecret + "}"
	_, stderr, err := runCLI(t, "-c", secret, "services", "up")
	if err == nil || !strings.Contains(err.Error(), where) || strings.Contains(err.Error(), "desktop client") {
		t.Fatalf("up = %v\n%s\nwant an error with %q and no word of desktop clients", err, stderr, where)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 0 {
		t.Errorf("containers after a refused up: %v", got)
	}
	if _, _, err := runCLI(t, "-c", secret, "services", "up", "kv"); err == nil || !strings.Contains(err.Error(), where) {
		t.Errorf("up kv = %v, want an error with %q", err, where)
	}
	// Another service starts; kv's variable is a warning, as for ls.
	for _, args := range [][]string{{"up", "other"}, {"ls"}} {
		_, stderr, err := runCLI(t, append([]string{"-c", secret, "services"}, args...)...)
		if err != nil || !strings.Contains(stderr, "warning: service kv: "+where) {
			t.Errorf("%s: %v; stderr %q, want a warning with %q", args, err, stderr, where)
		}
	}
	if _, stderr, err := runCLI(t, "-c", secret, "services", "down"); err != nil || stderr != "stopped kv, other; volumes kept\n" {
		t.Errorf("down: %v; stderr %q", err, stderr)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 0 {
		t.Errorf("containers after down: %v", got)
	}
}
