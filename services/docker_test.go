package services_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// These tests run against the real Docker engine (scripts/test-deps.sh
// installs and starts it). Each test uses its own project, so runs in
// parallel never meet, and TestMain checks that no container of this
// process's projects is left.

const kvImage = "skillgate-test/kv:dev"

var projectPrefix = fmt.Sprintf("st%d", os.Getpid())

func TestMain(m *testing.M) {
	if os.Getenv("SERVICES_HELPER") != "" {
		helper()
		return
	}
	code := m.Run()
	if out, err := exec.Command("docker", "ps", "-a", "--filter", "label="+services.LabelManaged+"=true", "--format", "{{.Names}}").Output(); err == nil {
		for _, name := range strings.Fields(string(out)) {
			if strings.HasPrefix(name, "skillgate."+projectPrefix) {
				fmt.Fprintf(os.Stderr, "FAIL: container %s left behind\n", name)
				exec.Command("docker", "rm", "-f", name).Run()
				code = 1
			}
		}
	}
	os.Exit(code)
}

var projects sync.Map

// project returns a project unique to t.
func project(t *testing.T) string {
	n := 0
	for {
		p := fmt.Sprintf("%s-%d", projectPrefix, n)
		if _, loaded := projects.LoadOrStore(p, true); !loaded {
			return p
		}
		n++
	}
}

// kvContext builds the kv program and returns a build context for it.
func kvContext(t *testing.T) string {
	t.Helper()
	return testenv.StaticImage(t, "services/testdata/kv", "")
}

func kvSpec(t *testing.T, name string) services.Spec {
	sp := kvDef(name)
	sp.Build = &services.Build{Context: kvContext(t)}
	return sp
}

// kvDef is the kv service without a build context (the image must exist).
func kvDef(name string) services.Spec {
	return services.Spec{
		Name:  name,
		Image: kvImage,
		Ports: []services.Port{{Container: 6379}},
		Healthcheck: &services.Healthcheck{
			Test: []string{"CMD", "/kv", "health"}, Interval: 200 * time.Millisecond, Retries: 3,
		},
		StartTimeout: 30 * time.Second,
	}
}

func newManager(t *testing.T, proj string, specs ...services.Spec) *services.Manager {
	t.Helper()
	testenv.Docker(t)
	m, err := services.New(specs, services.Options{Project: proj, StopTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close(context.Background())
		if err := m.Down(context.Background()); err != nil && !errors.Is(err, services.ErrClosed) {
			t.Error(err)
		}
		testenv.WaitNoContainers(t, 10*time.Second, "label="+services.LabelProject+"="+proj)
	})
	return m
}

// kvRoundTrip sets and gets a key through the published port.
func kvRoundTrip(t *testing.T, host, port string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	fmt.Fprintln(c, "SET greeting hello")
	if l, _ := r.ReadString('\n'); strings.TrimSpace(l) != "OK" {
		t.Fatalf("SET answered %q", l)
	}
	fmt.Fprintln(c, "GET greeting")
	if l, _ := r.ReadString('\n'); strings.TrimSpace(l) != "hello" {
		t.Fatalf("GET answered %q", l)
	}
}

func TestDockerOnDemandOnce(t *testing.T) {
	proj := project(t)
	m := newManager(t, proj, kvSpec(t, "kv"))
	start := make(chan struct{})
	var wg sync.WaitGroup
	envs := make([]map[string]string, 6)
	errs := make([]error, 6)
	for i := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			envs[i], errs[i] = m.Ensure(t.Context(), "kv")
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 1 {
		t.Fatalf("containers after 6 concurrent first calls: %v, want 1", got)
	}
	env := envs[0]
	for _, e := range envs {
		if e["KV_PORT"] != env["KV_PORT"] || e["KV_HOST"] != "127.0.0.1" {
			t.Fatalf("callers saw different wiring: %v vs %v", e, env)
		}
	}
	kvRoundTrip(t, env["KV_HOST"], env["KV_PORT"])
	st, err := m.Status(t.Context(), "kv")
	if err != nil || len(st) != 1 || !st[0].Ready() || st[0].Health != "healthy" {
		t.Fatalf("status %+v, %v", st, err)
	}
	// The port is bound on loopback only.
	if out := testenv.DockerCLI(t, "port", services.ContainerName(proj, "kv"), "6379/tcp"); !strings.HasPrefix(out, "127.0.0.1:") {
		t.Errorf("docker port = %q, want 127.0.0.1:...", out)
	}

	// up --build with unchanged inputs: build progress, same image, same
	// container. (The first rebuild may replace an image an older run left.)
	if err := m.Up(t.Context(), nil, true, "kv"); err != nil {
		t.Fatal(err)
	}
	id := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", services.ContainerName(proj, "kv"))
	var progress []services.Progress
	if err := m.Up(t.Context(), func(p services.Progress) { progress = append(progress, p) }, true, "kv"); err != nil {
		t.Fatal(err)
	}
	if len(progress) == 0 || progress[0].Phase != "build" || progress[0].Service != "kv" || progress[len(progress)-1].Total == 0 {
		t.Errorf("build progress = %+v", progress)
	}
	if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", services.ContainerName(proj, "kv")); got != id {
		t.Errorf("an unchanged rebuild replaced the container")
	}
}

func TestDockerUnhealthy(t *testing.T) {
	proj := project(t)
	sp := kvSpec(t, "sick")
	sp.Env = map[string]string{"KV_HEALTH_FAIL": "the disk is on fire"}
	sp.Healthcheck.Retries = 2
	m := newManager(t, proj, sp)
	_, err := m.Ensure(t.Context(), "sick")
	if !errors.Is(err, services.ErrUnhealthy) || !strings.Contains(err.Error(), "the disk is on fire") {
		t.Fatalf("err = %v; want ErrUnhealthy quoting the health check's output", err)
	}
	t.Log(err)

	crash := kvSpec(t, "crash")
	crash.Env = map[string]string{"KV_EXIT": "3"}
	m2 := newManager(t, project(t), crash)
	_, err = m2.Ensure(t.Context(), "crash")
	if !errors.Is(err, services.ErrUnhealthy) || !strings.Contains(err.Error(), "code 3") || !strings.Contains(err.Error(), "as KV_EXIT asks") {
		t.Fatalf("err = %v; want the exit code and the last output", err)
	}
	t.Log(err)

	slow := kvSpec(t, "slow")
	slow.Healthcheck = &services.Healthcheck{Test: []string{"CMD", "/kv", "health", "-addr", "127.0.0.1:1"}, Interval: 200 * time.Millisecond, Retries: 1000}
	slow.StartTimeout = 1500 * time.Millisecond
	m3 := newManager(t, project(t), slow)
	_, err = m3.Ensure(t.Context(), "slow")
	if !errors.Is(err, services.ErrUnhealthy) || !strings.Contains(err.Error(), "not healthy after 1.5s") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v; want a timeout quoting the last check", err)
	}
	t.Log(err)
}

// helper is the re-executed test binary: a "gateway" that starts the kv
// service, prints its wiring and waits to be killed.
func helper() {
	m, err := services.New([]services.Spec{kvDef("kv")}, services.Options{Project: os.Getenv("SERVICES_PROJECT")})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	env, err := m.Ensure(context.Background(), "kv")
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("PORT", env["KV_PORT"])
	select {}
}

func TestDockerAdoptAfterKill(t *testing.T) {
	proj := project(t)
	kvContext := kvContext(t)
	testenv.DockerCLI(t, "build", "-q", "-t", kvImage, kvContext)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SERVICES_HELPER=1", "SERVICES_PROJECT="+proj)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "PORT ")
	if !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	id := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", services.ContainerName(proj, "kv"))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	m := newManager(t, proj, kvSpec(t, "kv"))
	env, err := m.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if env["KV_PORT"] != port {
		t.Errorf("port %s after adoption, was %s", env["KV_PORT"], port)
	}
	if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", services.ContainerName(proj, "kv")); got != id {
		t.Errorf("container %s replaced by %s; want it adopted", id, got)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj); len(got) != 1 {
		t.Errorf("containers %v, want 1", got)
	}
	kvRoundTrip(t, "127.0.0.1", env["KV_PORT"])
	// Close stops what it adopted from a process that is gone, and the
	// presence marker that process left.
	if err := m.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	testenv.WaitNoContainers(t, 10*time.Second, "label="+services.LabelProject+"="+proj)
	if out := testenv.DockerCLI(t, "volume", "ls", "-q", "--filter", "label="+services.LabelProject+"="+proj); out != "" {
		t.Errorf("volumes left: %s", out)
	}
}

// TestDockerSecondProcessLeavesFirstAlone: a second manager of the project
// (another gateway, a one-shot command) adopts the running service and,
// when it stops, leaves it and the project's network to the first; the
// first, the last one out, removes them.
func TestDockerSecondProcessLeavesFirstAlone(t *testing.T) {
	proj := project(t)
	first := newManager(t, proj, kvSpec(t, "kv"))
	env, err := first.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	kvName := services.ContainerName(proj, "kv")
	id := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", kvName)
	second := newManager(t, proj, kvSpec(t, "kv"))
	if _, err := second.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if err := second.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}} {{.State.Status}}", kvName); got != id+" running" {
		t.Fatalf("after the second manager stopped, kv is %q; want %s running", got, id)
	}
	if out := testenv.DockerCLI(t, "network", "ls", "-q", "--filter", "name=^"+services.NetworkName(proj)+"$"); out == "" {
		t.Error("the second manager removed the project's network")
	}
	kvRoundTrip(t, "127.0.0.1", env["KV_PORT"])
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	testenv.WaitNoContainers(t, 10*time.Second, "label="+services.LabelProject+"="+proj)
	for _, kind := range []string{"volume", "network"} {
		if out := testenv.DockerCLI(t, kind, "ls", "-q", "--filter", "label="+services.LabelProject+"="+proj); out != "" {
			t.Errorf("%ss left after the last manager stopped: %s", kind, out)
		}
	}
}

// TestDockerFixedPortTaken: a fixed host port something else listens on
// fails the start at once, naming the port as written and what to do.
func TestDockerFixedPortTaken(t *testing.T) {
	proj := project(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	sp := kvSpec(t, "kv")
	sp.Ports = []services.Port{{Container: 6379, Host: port, Protocol: "tcp", Origin: "skillgate.yaml:9:13"}}
	m := newManager(t, proj, sp)
	_, err = m.Ensure(t.Context(), "kv")
	want := fmt.Sprintf(`service kv: host port %d/tcp is taken (ports: "%d:6379", skillgate.yaml:9:13)`, port, port)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `write "6379"`) {
		t.Fatalf("err = %v; want it to start with %q and say what to do", err, want)
	}
	t.Log(err)
}

// TestDockerBuildContextMissing: a build context that cannot be read is
// said to be so, not blamed on an unreachable engine.
func TestDockerBuildContextMissing(t *testing.T) {
	testenv.Docker(t)
	eng, err := services.NewDockerEngine()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "gone")
	err = eng.Build(t.Context(), &services.BuildConfig{Context: dir, Tag: "skillgate-test/never:built"}, nil)
	if err == nil || errors.Is(err, services.ErrNoEngine) || !strings.Contains(err.Error(), "build context "+dir) {
		t.Errorf("err = %v; want the build context named, not ErrNoEngine", err)
	}
}

func TestDockerPruneOnlyLabelled(t *testing.T) {
	proj := project(t)
	sp := kvSpec(t, "kv")
	sp.Volumes = []services.Volume{{Source: "data", Target: "/data"}}
	m := newManager(t, proj, sp)
	if _, err := m.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	// Things the test makes by hand, without labels, and a labelled
	// leftover of a project no longer configured.
	bystander := "bystander-" + proj
	testenv.DockerCLI(t, "create", "--name", bystander, kvImage)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", bystander).Run() })
	leftover := services.ContainerName(proj, "gone")
	testenv.DockerCLI(t, "create", "--name", leftover,
		"--label", services.LabelManaged+"=true", "--label", services.LabelProject+"="+proj,
		"--label", services.LabelRole+"="+services.RoleService, "--label", services.LabelService+"=gone", kvImage)
	orphanVol := services.VolumeName(proj, "orphan")
	testenv.DockerCLI(t, "volume", "create", "--label", services.LabelManaged+"=true", "--label", services.LabelProject+"="+proj, orphanVol)
	plainVol := "plain-" + proj
	testenv.DockerCLI(t, "volume", "create", plainVol)
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", plainVol).Run() })

	rep, err := m.Prune(t.Context(), services.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pruned %+v", rep)
	if fmt.Sprint(rep.Containers) != "["+leftover+"]" || fmt.Sprint(rep.Volumes) != "["+orphanVol+"]" {
		t.Errorf("prune = %+v; want the leftover container and the orphan volume only", rep)
	}
	if testenv.DockerCLI(t, "ps", "-a", "-q", "--filter", "name=^"+bystander+"$") == "" {
		t.Error("prune removed the unlabelled container")
	}
	if testenv.DockerCLI(t, "volume", "ls", "-q", "--filter", "name=^"+plainVol+"$") == "" {
		t.Error("prune removed the unlabelled volume")
	}
	if _, err := m.Ensure(t.Context(), "kv"); err != nil {
		t.Errorf("the running service suffered: %v", err)
	}
	// rm takes the data volume too.
	if err := m.Remove(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if out := testenv.DockerCLI(t, "volume", "ls", "-q", "--filter", "label="+"label="+services.LabelProject+"="+proj); out != "" {
		t.Errorf("volumes left after rm: %s", out)
	}
}

func TestDockerServerContainer(t *testing.T) {
	testenv.Docker(t)
	proj := project(t)
	const image = "skillgate-test/mcpecho:dev"
	testenv.StaticImage(t, "services/testdata/mcpecho", image)
	sc := &services.ServerContainer{Project: proj, Server: "echo", Image: image, EnvNames: []string{"GREETING"}}
	if err := sc.Check(); err != nil {
		t.Fatal(err)
	}
	name, args := sc.Command()
	c, err := client.NewStdioMCPClient(name, []string{"GREETING=hi from the host", "PATH=" + os.Getenv("PATH")}, args...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "whereami"
	res, err := c.CallTool(ctx, req)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if !strings.Contains(text, "greeting=hi from the host") || !strings.Contains(text, "ifaces=[lo]") {
		t.Errorf("whereami = %q; want the variable passed in and loopback only (--network none)", text)
	}
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj, "label="+services.LabelRole+"="+services.RoleServer); len(got) != 1 {
		t.Errorf("server containers: %v", got)
	}
	c.Close()
	// --rm removes the container once its stdin closes.
	testenv.WaitNoContainers(t, 15*time.Second, "label="+services.LabelProject+"="+proj)

	// Two gateways of the project run the same server at once, each its
	// own container. One's cleanup (when it starts or stops) removes its
	// own and a killed CLI's leftover, never the other's running one.
	mine := services.NewOwner()
	m, err := services.New(nil, services.Options{Project: proj, Owner: mine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	start := func(owner string) *client.Client {
		t.Helper()
		sc := &services.ServerContainer{Project: proj, Server: "echo", Image: image, Owner: owner}
		name, args := sc.Command()
		c, err := client.NewStdioMCPClient(name, []string{"PATH=" + os.Getenv("PATH")}, args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatalf("server container of owner %s: %v", owner, err)
		}
		return c
	}
	start(mine)
	theirs := start(services.NewOwner())
	if got := testenv.Containers(t, "label="+services.LabelProject+"="+proj, "status=running"); len(got) != 2 {
		// Seen once under CI load (one of the two missing); the states
		// and the engine's events say where it went.
		all := testenv.DockerCLI(t, "ps", "-a", "--filter", "label="+services.LabelProject+"="+proj, "--format", "{{.Names}} {{.State}} {{.Status}}")
		events := testenv.DockerCLI(t, "events", "--since", "2m", "--until", "0s", "--filter", "label="+services.LabelProject+"="+proj, "--format", "{{.Time}} {{.Action}} {{.Actor.Attributes.name}}")
		t.Fatalf("running server containers %v, want one per gateway; all of the project's:\n%s\nevents:\n%s", got, all, events)
	}
	removed, err := m.RemoveServers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != services.ServerContainerName(proj, "echo", mine) {
		t.Errorf("removed %v; want only this gateway's container", removed)
	}
	if _, err := theirs.CallTool(ctx, req); err != nil {
		t.Errorf("the other gateway's server after the cleanup: %v", err)
	}
	theirs.Close()
	testenv.WaitNoContainers(t, 15*time.Second, "label="+services.LabelProject+"="+proj)
}

// TestDockerRebuildRemovesReplacedImage: a rebuild that changes the image
// leaves no dangling image behind once the container runs the new one; an
// image skillgate did not build is never removed.
func TestDockerRebuildRemovesReplacedImage(t *testing.T) {
	proj := project(t)
	ctxDir := kvContext(t)
	tag := fmt.Sprintf("skillgate-test/kvrebuild:%d", os.Getpid())
	t.Cleanup(func() {
		_ = exec.Command("docker", "image", "rm", "-f", tag).Run()
		// What a failed run left dangling.
		_ = exec.Command("docker", "image", "prune", "-f", "--filter", "label=test.stamp").Run()
	})
	stamp := func(n int) {
		df, err := os.ReadFile(filepath.Join(ctxDir, "Dockerfile"))
		if err != nil {
			t.Fatal(err)
		}
		df = append(df, fmt.Sprintf("\nLABEL test.stamp=%d-%d\n", os.Getpid(), n)...)
		if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp := kvDef("kv")
	sp.Image = tag
	sp.Build = &services.Build{Context: ctxDir}
	stamp(1)
	m := newManager(t, proj, sp)
	if err := m.Up(t.Context(), nil, true, "kv"); err != nil {
		t.Fatal(err)
	}
	first := testenv.DockerCLI(t, "image", "inspect", "-f", "{{.Id}}", tag)
	// A second tag on the first image, put there by someone else, keeps it.
	other := tag + "-kept"
	testenv.DockerCLI(t, "tag", first, other)
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", other).Run() })

	stamp(2)
	if err := m.Up(t.Context(), nil, true, "kv"); err != nil {
		t.Fatal(err)
	}
	second := testenv.DockerCLI(t, "image", "inspect", "-f", "{{.Id}}", tag)
	if second == first {
		t.Fatal("the changed Dockerfile built the same image")
	}
	if err := exec.Command("docker", "image", "inspect", first).Run(); err != nil {
		t.Errorf("the replaced image, still tagged %s, was removed", other)
	}

	stamp(3)
	if err := m.Up(t.Context(), nil, true, "kv"); err != nil {
		t.Fatal(err)
	}
	if got := testenv.DockerCLI(t, "image", "inspect", "-f", "{{.Id}}", tag); got == second {
		t.Fatal("the changed Dockerfile built the same image")
	}
	if out, err := exec.Command("docker", "image", "inspect", second).CombinedOutput(); err == nil {
		t.Errorf("the image the rebuild replaced is still there: %s", second)
	} else if !strings.Contains(string(out), "No such") {
		t.Errorf("docker image inspect %s: %v %s", second, err, out)
	}
	if got := testenv.DockerCLI(t, "inspect", "-f", "{{.Image}}", services.ContainerName(proj, "kv")); got == second {
		t.Errorf("the container still runs the replaced image")
	}
}

// TestDockerPruneReplacedImages: prune --images removes the untagged
// images skillgate built (a rebuild interrupted before it removed the one it
// replaced), and leaves an untagged image without its label alone.
func TestDockerPruneReplacedImages(t *testing.T) {
	testenv.Docker(t)
	ctxDir := kvContext(t)
	tag := fmt.Sprintf("skillgate-test/kvprune:%d", os.Getpid())
	t.Cleanup(func() {
		_ = exec.Command("docker", "image", "rm", "-f", tag).Run()
		_ = exec.Command("docker", "image", "prune", "-f", "--filter", "label=test.prune").Run()
	})
	build := func(n int, labels ...string) string {
		args := []string{"build", "-q", "-t", tag, "--label", fmt.Sprintf("test.prune=%d-%d", os.Getpid(), n)}
		for _, l := range labels {
			args = append(args, "--label", l)
		}
		return testenv.DockerCLI(t, append(args, ctxDir)...)
	}
	ours := build(1, services.LabelManaged+"=true")
	theirs := build(2)
	build(3) // untags theirs
	m := newManager(t, project(t), kvDef("kv"))
	rep, err := m.Prune(t.Context(), services.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Images) != 0 {
		t.Errorf("a prune without Images removed images %v", rep.Images)
	}
	if rep, err = m.Prune(t.Context(), services.PruneOptions{Images: true}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Images, ours) {
		t.Errorf("prune removed images %v; want %s among them", rep.Images, ours)
	}
	if err := exec.Command("docker", "image", "inspect", ours).Run(); err == nil {
		t.Errorf("the untagged image skillgate built is still there")
	}
	if err := exec.Command("docker", "image", "inspect", theirs).Run(); err != nil {
		t.Errorf("prune removed an untagged image without skillgate's label")
	}
}
