package gateway_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// The gateway's tests tag their own images: packages test in parallel,
// and a tag another package rebuilds (the services tests build kv:dev
// their own way) would move under a running test, whose services would
// then see their image changed and recreate their containers.
const (
	kvTestImage   = "skillgate-test/kv:gateway"
	echoTestImage = "skillgate-test/mcpecho:gateway"
)

// kvServiceYAML is the services: entry of the kv test service (built from
// ctx), under docker.project proj, with extra lines indented under kv.
func kvServiceYAML(proj, ctx string, extra ...string) string {
	return kvServiceYAMLEvery(proj, ctx, "200ms", extra...)
}

// kvServiceYAMLEvery is kvServiceYAML with the health check's interval
// (the first check runs one interval after the start).
func kvServiceYAMLEvery(proj, ctx, interval string, extra ...string) string {
	y := fmt.Sprintf(`
docker: {project: %s}
services:
  kv:
    image: %s
    build: {context: %s}
    ports: ["6379"]
    healthcheck: {test: [CMD, /kv, health], interval: %s}
`, proj, kvTestImage, ctx, interval)
	for _, e := range extra {
		y += "    " + e + "\n"
	}
	return y
}

// toolText calls a tool through the gateway and returns its first text.
func toolText(t *testing.T, r *running, name, args string) (string, bool) {
	t.Helper()
	res, err := r.gw.CallTool(t.Context(), name, json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(res, &out); err != nil || len(out.Content) == 0 {
		t.Fatalf("%s: %s (%v)", name, res, err)
	}
	return out.Content[0].Text, out.IsError
}

// TestServicesGateway runs, through the gateway, a stdio server that
// requires a service (started on demand, its address injected) and an MCP
// server that is itself a container; when the gateway stops, no container
// of its project is left.
func TestServicesGateway(t *testing.T) {
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	echoDir := testenv.StaticImage(t, "services/testdata/mcpecho", echoTestImage)
	proj := fmt.Sprintf("gw%d", os.Getpid())
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	yaml := kvServiceYAML(proj, kvCtx) + fmt.Sprintf(`servers:
  local: {command: %s, requires: [kv]}
  boxed: {image: %s, env: {GREETING: "hello box"}}
  boxedkv: {image: %s, requires: [kv]}
`, filepath.Join(echoDir, "mcpecho"), echoTestImage, echoTestImage)
	r := startGateway(t, yaml, nil)
	st := r.waitReady(t, "local", "boxed", "boxedkv")

	if got, isErr := toolText(t, r, "local__kv", `{"command":"SET city Lisbon"}`); isErr || got != "OK" {
		t.Fatalf("SET through the wired server = %q (error %v)", got, isErr)
	}
	if got, _ := toolText(t, r, "local__kv", `{"command":"GET city"}`); got != "Lisbon" {
		t.Fatalf("GET = %q", got)
	}
	// An image server that requires kv reaches it by name on the project's
	// network (it has no other network: not the host, not bridge).
	if got, isErr := toolText(t, r, "boxedkv__kv", `{"command":"GET city"}`); isErr || got != "Lisbon" {
		t.Errorf("GET through the image server = %q (error %v)", got, isErr)
	}
	if got, _ := toolText(t, r, "boxedkv__whereami", `{}`); !strings.Contains(got, "ifaces=[eth0 lo]") && !strings.Contains(got, "ifaces=[lo eth0]") {
		t.Errorf("boxedkv__whereami = %q; want the project network's interface and loopback", got)
	}
	if s := st["local"].Services; len(s) != 1 || s[0].Name != "kv" || s[0].State != services.StateHealthy {
		t.Errorf("local's services in /readyz = %+v", s)
	}
	got, _ := toolText(t, r, "boxed__whereami", `{}`)
	if !strings.Contains(got, "greeting=hello box") || !strings.Contains(got, "ifaces=[lo]") {
		t.Errorf("boxed__whereami = %q; want its env and loopback only", got)
	}
	if n := testenv.Containers(t, "label="+services.LabelProject+"="+proj, "label="+services.LabelRole+"="+services.RoleServer); len(n) != 2 {
		t.Errorf("server containers %v, want boxed and boxedkv", n)
	}
	resp, err := http.Get(r.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Services []services.Status `json:"services"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if len(body.Services) != 1 || body.Services[0].Service != "kv" || body.Services[0].Env["KV_HOST"] != "127.0.0.1" {
		t.Errorf("/readyz services = %+v", body.Services)
	}

	// The @services admin group: the CLI's verbs over MCP.
	rec := &recorder{}
	res, err := r.gw.CallTool(t.Context(), "services__up", json.RawMessage(`{"names":["kv"],"rebuild":true}`), rec)
	if err != nil || !strings.Contains(string(res), "healthy") {
		t.Fatalf("services__up = %s, %v", res, err)
	}
	if len(rec.progress) == 0 || !strings.Contains(rec.progress[0].Message, "kv: build") {
		t.Errorf("up progress = %+v", rec.progress)
	}
	if got, _ := toolText(t, r, "services__logs", `{"name":"kv","tail":5}`); !strings.Contains(got, "kv listening on") {
		t.Errorf("services__logs = %q", got)
	}
	if got, _ := toolText(t, r, "services__ls", `{}`); !strings.Contains(got, "kv ") || !strings.Contains(got, "healthy") {
		t.Errorf("services__ls = %q", got)
	}
	if got, isErr := toolText(t, r, "services__down", `{"names":["kv"]}`); isErr {
		t.Fatalf("services__down: %s", got)
	}
	testenv.WaitNoContainers(t, 10*time.Second, "label="+services.LabelProject+"="+proj, "label="+services.LabelRole+"="+services.RoleService)
	// The next call starts kv again, on its old port: the server's
	// variables still hold (the data went with the container).
	if got, isErr := toolText(t, r, "local__kv", `{"command":"GET city"}`); isErr || got != "NIL" {
		t.Errorf("GET after down = %q (error %v); want kv restarted on demand, empty", got, isErr)
	}

	// kv comes back on another port (its old one is taken meanwhile): the
	// server started with the old address is restarted with the new one.
	oldPort, pid := readyKVPort(t, r), r.status(t)["local"].PID
	if got, isErr := toolText(t, r, "services__down", `{"names":["kv"]}`); isErr {
		t.Fatalf("services__down: %s", got)
	}
	testenv.WaitNoContainers(t, 10*time.Second, "label="+services.LabelProject+"="+proj, "label="+services.LabelRole+"="+services.RoleService)
	ln, err := net.Listen("tcp", "127.0.0.1:"+oldPort)
	if err != nil {
		t.Fatalf("take kv's old port %s: %v", oldPort, err)
	}
	got, isErr := toolText(t, r, "local__kv", `{"command":"SET city Porto"}`)
	ln.Close()
	if isErr || got != "OK" {
		t.Fatalf("SET after kv moved = %q (error %v); want the server restarted with kv's new address", got, isErr)
	}
	if newPort := readyKVPort(t, r); newPort == oldPort {
		t.Errorf("kv came back on its old port %s, which was taken", oldPort)
	}
	if now := r.status(t)["local"].PID; now == pid || now == 0 {
		t.Errorf("local's pid %d -> %d; want a new process", pid, now)
	}
	if got, _ := toolText(t, r, "local__kv", `{"command":"GET city"}`); got != "Porto" {
		t.Errorf("GET on the restarted server = %q", got)
	}
}

// readyKVPort is kv's KV_PORT as /readyz shows it.
func readyKVPort(t *testing.T, r *running) string {
	t.Helper()
	var body struct {
		Services []services.Status `json:"services"`
	}
	r.readyz(t, &body)
	for _, s := range body.Services {
		if s.Service == "kv" && s.Env["KV_PORT"] != "" {
			return s.Env["KV_PORT"]
		}
	}
	t.Fatalf("/readyz services = %+v; no KV_PORT", body.Services)
	return ""
}

// TestServicesGatewayManual: a manual service that is not running fails the
// server that requires it, with the command that starts it.
func TestServicesGatewayManual(t *testing.T) {
	testenv.Docker(t)
	echoDir := testenv.StaticImage(t, "services/testdata/mcpecho", "")
	proj := fmt.Sprintf("gwm%d", os.Getpid())
	yaml := fmt.Sprintf(`
docker: {project: %s}
services:
  kv: {image: %s, ports: ["6379"], policy: manual}
servers:
  local: {command: %s, requires: [kv]}
pipelines:
  inline:
    needkv:
      requires: [kv]
      steps: [{id: s, tool: admin__servers}]
`, proj, kvTestImage, filepath.Join(echoDir, "mcpecho"))
	r := startGateway(t, yaml, nil)
	st := r.status(t)["local"]
	if st.State != "failed" || !strings.Contains(st.LastError, "policy is manual") || !strings.Contains(st.LastError, "services up kv") {
		t.Errorf("local = %+v; want failed with the command that starts kv", st)
	}
	// A pipeline's requires is checked before it runs.
	within(t, "pipelines__needkv served", func() bool { _, ok := r.gw.Snapshot().Tool("pipelines__needkv"); return ok })
	if got, isErr := toolText(t, r, "pipelines__needkv", `{}`); !isErr || !strings.Contains(got, "requires kv") || !strings.Contains(got, "services up kv") {
		t.Errorf("pipelines__needkv = %q (error %v); want a refusal naming kv and the command that starts it", got, isErr)
	}
	if n := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(n) != 0 {
		t.Errorf("a manual service was started: %v", n)
	}
	// The services a pipeline requires show under the pipelines' source.
	ps := r.status(t)["pipelines"].Services
	if len(ps) != 1 || ps[0].Name != "kv" || len(ps[0].RequiredBy) != 1 || ps[0].RequiredBy[0] != "needkv" {
		t.Errorf("the pipelines' services in /readyz = %+v; want kv, required by needkv", ps)
	}
}

// TestServicesTwoGateways: two gateways serve one config (replicas, or a
// one-shot command next to a running gateway). The second adopts the
// first's service, runs its own image server container, and when it stops
// leaves the first's service, server container and network alone.
func TestServicesTwoGateways(t *testing.T) {
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	echoDir := testenv.StaticImage(t, "services/testdata/mcpecho", echoTestImage)
	proj := fmt.Sprintf("gw2%d", os.Getpid())
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	yaml := kvServiceYAML(proj, kvCtx) + fmt.Sprintf(`servers:
  local: {command: %s, requires: [kv]}
  boxedkv: {image: %s, requires: [kv]}
`, filepath.Join(echoDir, "mcpecho"), echoTestImage)
	first := startGateway(t, yaml, nil)
	first.waitReady(t, "local", "boxedkv")
	if got, isErr := toolText(t, first, "local__kv", `{"command":"SET city Lisbon"}`); isErr || got != "OK" {
		t.Fatalf("SET = %q (error %v)", got, isErr)
	}
	kvName := services.ContainerName(proj, "kv")
	kvID := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName)
	servers := func() []string {
		return testenv.Containers(t, "label="+services.LabelProject+"="+proj, "label="+services.LabelRole+"="+services.RoleServer, "status=running")
	}
	firstServer := servers()
	if len(firstServer) != 1 {
		t.Fatalf("server containers %v, want the first gateway's", firstServer)
	}

	second := startGateway(t, yaml, nil)
	second.waitReady(t, "local", "boxedkv")
	if got, isErr := toolText(t, second, "boxedkv__kv", `{"command":"GET city"}`); isErr || got != "Lisbon" {
		t.Errorf("GET through the second gateway = %q (error %v); want the first's kv adopted", got, isErr)
	}
	if n := servers(); len(n) != 2 {
		t.Errorf("server containers %v, want one per gateway", n)
	}
	if err := second.gw.Close(); err != nil {
		t.Fatal(err)
	}
	within(t, "the second gateway's server container gone", func() bool { return len(servers()) == 1 })
	if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{.State.Status}}", kvName); got != kvID+" running" {
		t.Errorf("kv after the second gateway stopped: %q; want %s running", got, kvID)
	}
	if n := servers(); len(n) != 1 || n[0] != firstServer[0] {
		t.Errorf("server containers after the second gateway stopped: %v; want the first's, %v", n, firstServer)
	}
	if got, isErr := toolText(t, first, "boxedkv__kv", `{"command":"GET city"}`); isErr || got != "Lisbon" {
		t.Errorf("GET through the first gateway's image server = %q (error %v)", got, isErr)
	}
	if st := first.status(t)["boxedkv"]; st.State != "ready" || st.Restarts != 0 {
		t.Errorf("the first gateway's boxedkv = %+v; want ready, never restarted", st)
	}
}

// TestServicesStatusNotStale: /readyz and services__ls do not report a
// service healthy after its container went: past docker.health_ttl they
// ask the engine again. services__status gives the CLI's detail.
func TestServicesStatusNotStale(t *testing.T) {
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	proj := fmt.Sprintf("gws%d", os.Getpid())
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	yaml := strings.Replace(kvServiceYAML(proj, kvCtx), "docker: {project: "+proj+"}", "docker: {project: "+proj+", health_ttl: 300ms}", 1)
	r := startGateway(t, yaml, nil)
	if _, err := r.gw.EnsureServices(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	got, isErr := toolText(t, r, "services__status", `{"names":["kv"]}`)
	for _, want := range []string{"kv: healthy (health healthy)", "container  " + services.ContainerName(proj, "kv"), "env        KV_PORT=", "policy     auto"} {
		if isErr || !strings.Contains(got, want) {
			t.Errorf("services__status = %q; want %q in it", got, want)
		}
	}
	testenv.DockerCLI(t, "rm", "-f", services.ContainerName(proj, "kv"))
	kvState := func() string {
		var body struct {
			Services []services.Status `json:"services"`
		}
		r.readyz(t, &body)
		if len(body.Services) != 1 {
			t.Fatalf("/readyz services = %+v", body.Services)
		}
		return body.Services[0].State
	}
	within(t, "/readyz says kv stopped", func() bool { return kvState() == services.StateStopped })
	if got, _ := toolText(t, r, "services__ls", `{}`); !strings.Contains(got, "stopped") {
		t.Errorf("services__ls = %q; want kv stopped", got)
	}
}

// TestServicesImageServerMissingImage: an image server whose image is not
// on the engine and cannot be pulled fails with what to do, not with the
// engine's bare text.
func TestServicesImageServerMissingImage(t *testing.T) {
	testenv.Docker(t)
	proj := fmt.Sprintf("gwi%d", os.Getpid())
	image := fmt.Sprintf("skillgate-test/absent:%d", os.Getpid())
	r := startGateway(t, fmt.Sprintf("docker: {project: %s}\nservers:\n  ghost: {image: %q}\n", proj, image), nil)
	st := r.status(t)["ghost"]
	if st.State != "failed" || !strings.Contains(st.LastError, "docker build -t "+image) {
		t.Errorf("ghost = %+v; want failed with how to build the image", st)
	}
	if n := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(n) != 0 {
		t.Errorf("containers %v", n)
	}
}

// TestServicesExample runs examples/services as its README says (its own
// project, so a user's run of the example is left alone).
func TestServicesExample(t *testing.T) {
	testenv.Docker(t)
	root := testenv.RepoRoot(t)
	dir := filepath.Join(root, "examples", "services")
	tmp := t.TempDir()
	for _, b := range []struct{ out, pkg, cgo string }{
		{filepath.Join(tmp, "kv", "kv"), "./examples/services/kv", "0"},
		{filepath.Join(tmp, "bin", "notes"), "./examples/services/notes", "1"},
	} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	df, err := os.ReadFile(filepath.Join(dir, "kv", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "kv", "Dockerfile"), df, 0o644)
	yaml, err := os.ReadFile(filepath.Join(dir, "skillgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	proj := fmt.Sprintf("ex%d", os.Getpid())
	cfg := strings.Replace(string(yaml), "project: notes-example", "project: "+proj, 1)
	cfg = strings.Replace(cfg, "keep: true", "keep: false", 1)
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	r := startGatewayNamed(t, filepath.Join(tmp, "skillgate.yaml"), cfg, nil)
	r.waitReady(t, "notes")
	if got, isErr := toolText(t, r, "notes__save", `{"title":"groceries","text":"eggs, milk"}`); isErr || got != "OK" {
		t.Fatalf("save = %q", got)
	}
	if got, _ := toolText(t, r, "notes__read", `{"title":"groceries"}`); got != "eggs, milk" {
		t.Fatalf("read = %q", got)
	}
}

// TestServicesReload: a reloaded config's services apply without a
// restart. A service whose definition changed is recreated on its next use
// (same host port, so its users keep their address), a service no longer
// declared stops, and the gateway's shutdown still leaves nothing behind.
func TestServicesReload(t *testing.T) {
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	echoDir := testenv.StaticImage(t, "services/testdata/mcpecho", "")
	proj := fmt.Sprintf("gwr%d", os.Getpid())
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	conf := func(mode string, extra bool) string {
		y := kvServiceYAML(proj, kvCtx, "env: {MODE: "+mode+"}")
		if extra {
			y += fmt.Sprintf(`  spare:
    image: %s
    ports: ["6379"]
    healthcheck: {test: [CMD, /kv, health], interval: 200ms}
`, kvTestImage)
		}
		return y + fmt.Sprintf("servers:\n  local: {command: %s, requires: [kv]}\n", filepath.Join(echoDir, "mcpecho"))
	}
	r := startGateway(t, conf("one", true), nil)
	r.waitReady(t, "local")
	if got, isErr := toolText(t, r, "local__kv", `{"command":"SET city Lisbon"}`); isErr || got != "OK" {
		t.Fatalf("SET = %q (error %v)", got, isErr)
	}
	if got, isErr := toolText(t, r, "services__up", `{"names":["spare"]}`); isErr {
		t.Fatalf("services__up spare: %s", got)
	}
	kvName := services.ContainerName(proj, "kv")
	before := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName)
	port := readyKVPort(t, r)

	cfg, err := config.Parse(strings.NewReader(conf("two", false)), "reloaded.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	testenv.WaitNoContainers(t, 10*time.Second, "name=^"+services.ContainerName(proj, "spare")+"$")
	// The next use recreates kv with MODE=two, on the same host port: the
	// server is not restarted and its data is gone with the old container.
	if got, isErr := toolText(t, r, "local__kv", `{"command":"GET city"}`); isErr || got != "NIL" {
		t.Errorf("GET after the reload = %q (error %v); want kv recreated, empty", got, isErr)
	}
	if after := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName); after == before {
		t.Error("kv's container was not recreated for its new definition")
	}
	if env := testenv.DockerCLI(t, "inspect", "-f", "{{range .Config.Env}}{{println .}}{{end}}", kvName); !strings.Contains(env, "MODE=two") {
		t.Errorf("kv's environment after the reload: %s", env)
	}
	if now := readyKVPort(t, r); now != port {
		t.Errorf("kv moved from port %s to %s", port, now)
	}
	if got, isErr := toolText(t, r, "services__ls", `{}`); isErr || strings.Contains(got, "spare") {
		t.Errorf("services__ls after the reload = %q", got)
	}
}

// TestServicesReloadDuringStart: a config reload while a service is still
// starting does not fail the call waiting on it; the reloaded config's
// manager adopts the container the first start created.
func TestServicesReloadDuringStart(t *testing.T) {
	testenv.Docker(t)
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	proj := fmt.Sprintf("gwd%d", os.Getpid())
	t.Cleanup(func() {
		testenv.WaitNoContainers(t, 20*time.Second, "label="+services.LabelProject+"="+proj)
	})
	// The first health check runs 2 s after the start: time to reload.
	conf := func(spare bool) string {
		y := kvServiceYAMLEvery(proj, kvCtx, "2s")
		if spare {
			y += fmt.Sprintf("  spare: {image: %s, ports: [\"6379\"]}\n", kvTestImage)
		}
		return y
	}
	r := startGateway(t, conf(false), nil)
	type result struct {
		env map[string]string
		err error
	}
	done := make(chan result, 1)
	go func() {
		env, err := r.gw.EnsureServices(t.Context(), "kv")
		done <- result{env, err}
	}()
	kvName := services.ContainerName(proj, "kv")
	var first string
	for deadline := time.Now().Add(time.Minute); first == ""; {
		if len(testenv.Containers(t, "name=^"+kvName+"$")) > 0 {
			first = testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName)
		} else if time.Now().After(deadline) {
			t.Fatal("kv's container never appeared")
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	cfg, err := config.Parse(strings.NewReader(conf(true)), "reloaded.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("the call waiting on kv failed across the reload: %v", res.err)
		}
		if res.env["KV_PORT"] == "" {
			t.Errorf("no KV_PORT in %v", res.env)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call waiting on kv never returned")
	}
	if now := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName); now != first {
		t.Errorf("kv's container after the reload is %.12s; want the first one, %.12s, adopted", now, first)
	}
}
