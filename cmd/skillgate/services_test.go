package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// servicesConfig writes a config with the kv test service (built from
// services/testdata/kv) and a stdio server that requires it, and returns
// its path and project.
func servicesConfig(t *testing.T, extra string) (string, string) {
	t.Helper()
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	echo := testenv.StaticImage(t, "services/testdata/mcpecho", "")
	proj := fmt.Sprintf("cli%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	cfg := fmt.Sprintf(`docker: {project: %s}
services:
  kv:
    image: skillgate-test/kv:cli
    build: {context: %s}
    ports: ["6379"]
    healthcheck: {test: [CMD, /kv, health], interval: 200ms}
servers:
  local: {command: %s, requires: [kv]}
%s`, proj, kvCtx, filepath.Join(echo, "mcpecho"), extra)
	path := filepath.Join(t.TempDir(), "skillgate.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		runCLI(t, "-c", path, "services", "down")
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	return path, proj
}

func TestServicesCLI(t *testing.T) {
	cfg, proj := servicesConfig(t, "")
	if _, stderr, err := runCLI(t, "-c", cfg, "services", "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, stderr)
	}
	if strings.Contains(func() string { _, e, _ := runCLI(t, "-c", cfg, "services", "up"); return e }(), "build") {
		t.Error("progress on a stderr that is not a terminal")
	}
	out, _, err := runCLI(t, "-c", cfg, "services", "ls")
	if err != nil || !strings.Contains(out, "kv") || !strings.Contains(out, "healthy") || !strings.Contains(out, "127.0.0.1:") {
		t.Fatalf("ls = %q, %v", out, err)
	}
	out, _, err = runCLI(t, "-c", cfg, "services", "status", "--json")
	var st []services.Status
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || len(st) != 1 || st[0].Env["KV_PORT"] == "" {
		t.Fatalf("status --json = %q, %v", out, err)
	}
	if out, _, err = runCLI(t, "-c", cfg, "services", "logs", "--tail", "3", "kv"); err != nil || !strings.Contains(out, "kv listening") {
		t.Errorf("logs = %q, %v", out, err)
	}
	if _, _, err = runCLI(t, "-c", cfg, "services", "down"); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 0 {
		t.Errorf("containers after down: %v", got)
	}
	if out, _, err = runCLI(t, "-c", cfg, "services", "prune"); err != nil || !strings.Contains(out, "nothing to prune") {
		t.Errorf("prune = %q, %v", out, err)
	}
	if _, _, err = runCLI(t, "-c", cfg, "services", "logs", "nope"); err == nil || !strings.Contains(err.Error(), "unknown service") {
		t.Errorf("logs of an unknown service: %v", err)
	}
}

// TestGatewayKilledAdopts kills a running gateway with SIGKILL and starts
// another on the same config: it adopts the service container (same
// container, same port) instead of starting a second one, and removes it
// when it stops normally.
func TestGatewayKilledAdopts(t *testing.T) {
	bin := buildSkillgate(t)
	port := testenv.FreePort(t)
	cfg, proj := servicesConfig(t, fmt.Sprintf("listen: {http: 127.0.0.1:%d}\n", port))
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	start := func() *testenv.Process {
		p := testenv.Start(t, exec.Command(bin, "-c", cfg, "run"))
		deadline := time.Now().Add(60 * time.Second)
		for {
			resp, err := http.Get(readyz)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return p
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("gateway never ready: %v\n%s", err, p.Output())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	containerID := func() string {
		return testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{(index (index .HostConfig.PortBindings \"6379/tcp\") 0).HostPort}}", services.ContainerName(proj, "kv"))
	}

	first := start()
	before := containerID()
	syscall.Kill(-first.PID(), syscall.SIGKILL)
	<-first.Done()
	if got := containerID(); got != before {
		t.Fatalf("the container changed when the gateway was killed: %s -> %s", before, got)
	}

	second := start()
	if got := containerID(); got != before {
		t.Errorf("after restart: container and port %s, want %s adopted", got, before)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 1 {
		t.Errorf("containers %v, want 1", got)
	}
	if err := second.Stop(); err != nil {
		t.Error(err)
	}
	testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
}
