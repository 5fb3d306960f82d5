package main

import (
	"encoding/json"
	"errors"
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
	_, stderr, err := runCLI(t, "-c", cfg, "services", "down")
	if err != nil {
		t.Fatal(err)
	}
	if stderr != "stopped kv; volumes kept\n" {
		t.Errorf("down said %q on stderr", stderr)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 0 {
		t.Errorf("containers after down: %v", got)
	}
	if out, _, err = runCLI(t, "-c", cfg, "services", "prune"); err != nil || !strings.Contains(out, "nothing to prune") {
		t.Errorf("prune = %q, %v", out, err)
	}
	if out, _, err = runCLI(t, "-c", cfg, "services", "prune", "--json"); err != nil || strings.Contains(out, "null") || !strings.Contains(out, `"containers": []`) {
		t.Errorf("prune --json = %q, %v; want empty lists, not null", out, err)
	}
	if _, _, err := runCLI(t, "-c", cfg, "services", "up"); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err = runCLI(t, "-c", cfg, "services", "rm", "kv"); err != nil || stderr != "removed kv and its volumes\n" {
		t.Errorf("rm: %v, stderr %q", err, stderr)
	}
	if out := testenv.DockerCLI(t, "network", "ls", "-q", "--filter", "label="+services.LabelProject+"="+proj); out != "" {
		t.Errorf("rm of the only service left the project's network: %s", out)
	}
	if _, _, err = runCLI(t, "-c", cfg, "services", "logs", "nope"); err == nil || !strings.Contains(err.Error(), "unknown service") {
		t.Errorf("logs of an unknown service: %v", err)
	}
}

// startGatewayProcess runs `bin -c cfg run` (with extra arguments) and
// waits until its /readyz on port says ready.
func startGatewayProcess(t *testing.T, bin, cfg string, port int, extra ...string) *testenv.Process {
	t.Helper()
	p := testenv.Start(t, exec.Command(bin, append([]string{"-c", cfg, "run"}, extra...)...))
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
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

// TestServicesSecondGateway: with a gateway serving a config, the one-shot
// commands on the same config (servers, call) and a second gateway on
// another port use its service and leave its containers and network as
// they are: its image server keeps running, never restarted.
func TestServicesSecondGateway(t *testing.T) {
	bin := buildSkillgate(t)
	testenv.Docker(t)
	echoImage := "skillgate-test/mcpecho:cli"
	testenv.StaticImage(t, "services/testdata/mcpecho", echoImage)
	port := testenv.FreePort(t)
	cfg, proj := servicesConfig(t, fmt.Sprintf("  boxed: {image: %s, requires: [kv]}\nlisten: {http: 127.0.0.1:%d}\n", echoImage, port))
	gw := startGatewayProcess(t, bin, cfg, port)
	kvName := services.ContainerName(proj, "kv")
	kv := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName)
	boxed := testenv.Containers(t, "label="+services.LabelProject+"="+proj, "label="+services.LabelRole+"="+services.RoleServer)
	if len(boxed) != 1 {
		t.Fatalf("server containers %v", boxed)
	}
	boxedID := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", boxed[0])
	intact := func(after string) {
		t.Helper()
		if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{.State.Status}}", kvName); got != kv+" running" {
			t.Errorf("after %s, kv is %q; want %.12s running", after, got, kv)
		}
		if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{.State.Status}}", boxed[0]); got != boxedID+" running" {
			t.Errorf("after %s, the gateway's server container is %q; want it running", after, got)
		}
		if out := testenv.DockerCLI(t, "network", "ls", "-q", "--filter", "name=^"+services.NetworkName(proj)+"$"); out == "" {
			t.Errorf("after %s, the project's network is gone", after)
		}
	}
	for _, args := range [][]string{{"servers"}, {"call", "local__kv", "--json", `{"command":"SET city Lisbon"}`}} {
		out, err := exec.Command(bin, append([]string{"-c", cfg}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		intact("skillgate " + args[0])
	}
	port2 := testenv.FreePort(t)
	second := startGatewayProcess(t, bin, cfg, port2, "--listen", fmt.Sprintf("127.0.0.1:%d", port2))
	if err := second.Stop(); err != nil {
		t.Error(err)
	}
	intact("a second gateway's run")
	out, err := exec.Command(bin, "servers", "--url", fmt.Sprintf("127.0.0.1:%d", port)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "boxed requires kv (healthy)") {
		t.Errorf("servers --url: %v\n%s", err, out)
	}
	if strings.Contains(string(gw.Output()), "already in use") {
		t.Errorf("the first gateway met a name conflict:\n%s", gw.Output())
	}
	if err := gw.Stop(); err != nil {
		t.Error(err)
	}
	testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	for _, kind := range []string{"volume", "network"} {
		if out := testenv.DockerCLI(t, kind, "ls", "-q", "--filter", "label="+services.LabelProject+"="+proj); out != "" {
			t.Errorf("%ss left after the last gateway stopped: %s", kind, out)
		}
	}
}

// TestServicesUpOutlivesGateway: a service `services up` started runs on
// after a gateway that used it stops, until `services down`.
func TestServicesUpOutlivesGateway(t *testing.T) {
	bin := buildSkillgate(t)
	port := testenv.FreePort(t)
	cfg, proj := servicesConfig(t, fmt.Sprintf("listen: {http: 127.0.0.1:%d}\n", port))
	if _, stderr, err := runCLI(t, "-c", cfg, "services", "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, stderr)
	}
	kvName := services.ContainerName(proj, "kv")
	id := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName)
	gw := startGatewayProcess(t, bin, cfg, port)
	if err := gw.Stop(); err != nil {
		t.Error(err)
	}
	if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{.State.Status}}", kvName); got != id+" running" {
		t.Errorf("after the gateway stopped, kv is %q; want %.12s running until services down", got, id)
	}
}

// TestServicesCLIEngineDown: with no engine, each command says so once,
// and prune claims nothing.
func TestServicesCLIEngineDown(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "skillgate.yaml")
	if err := os.WriteFile(cfg, []byte("services:\n  a: {image: a:1}\n  b: {image: b:1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(dir, "no.sock"))
	for _, args := range [][]string{{"down"}, {"rm", "a", "b"}, {"prune"}, {"ls"}} {
		out, _, err := runCLI(t, append([]string{"-c", cfg, "services"}, args...)...)
		if !errors.Is(err, services.ErrNoEngine) || strings.Count(err.Error(), "no.sock") != 1 {
			t.Errorf("services %s: %v; want the engine's error once", args[0], err)
		}
		if strings.Contains(out, "nothing to prune") {
			t.Errorf("services %s printed %q", args[0], out)
		}
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
	start := func() *testenv.Process { return startGatewayProcess(t, bin, cfg, port) }
	containerID := func() string {
		return testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{(index (index .HostConfig.PortBindings \"6379/tcp\") 0).HostPort}}", services.ContainerName(proj, "kv"))
	}

	first := start()
	before := containerID()
	_ = first.Signal(syscall.SIGKILL)
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
	// The killed gateway's presence marker went with its container.
	if out := testenv.DockerCLI(t, "volume", "ls", "-q", "--filter", "label="+services.LabelProject+"="+proj); out != "" {
		t.Errorf("volumes left: %s", out)
	}
}
