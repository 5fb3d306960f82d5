package services

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestManager(t *testing.T, eng *fakeEngine, specs ...Spec) *Manager {
	t.Helper()
	m, err := New(specs, Options{Project: "unit", Engine: eng, StartTimeout: 2 * time.Second, CLI: "skillgate -c x.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func kvSpec(name string) Spec {
	return Spec{Name: name, Image: "kv:1", Ports: []Port{{Container: 6379, Protocol: "tcp"}, {Container: 9000, Protocol: "udp"}}}
}

func TestEnsureStartsOnceAndWires(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.health["kv:1"] = "healthy"
	eng.createDelay = 50 * time.Millisecond
	m := newTestManager(t, eng, kvSpec("my-kv"))

	var wg sync.WaitGroup
	envs := make([]map[string]string, 8)
	errs := make([]error, 8)
	for i := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			envs[i], errs[i] = m.Ensure(t.Context(), "my-kv")
		}()
	}
	wg.Wait()
	for i := range envs {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
	}
	if n := eng.creates.Load(); n != 1 {
		t.Errorf("%d creates for 8 concurrent callers, want 1", n)
	}
	env := envs[0]
	if env["MY_KV_HOST"] != "127.0.0.1" || env["MY_KV_PORT"] == "" || env["MY_KV_PORT"] != env["MY_KV_PORT_6379"] || env["MY_KV_PORT_9000_UDP"] == "" {
		t.Errorf("env = %v", env)
	}
	for _, e := range envs[1:] {
		if e["MY_KV_PORT"] != env["MY_KV_PORT"] {
			t.Errorf("callers got different ports: %v vs %v", e, env)
		}
	}
	// The hot path asks the engine nothing.
	before := eng.inspects.Load()
	for range 100 {
		if _, err := m.Ensure(t.Context(), "my-kv"); err != nil {
			t.Fatal(err)
		}
	}
	if n := eng.inspects.Load() - before; n != 0 {
		t.Errorf("%d inspects on the hot path, want 0", n)
	}
	// The caller owns the map.
	env["MY_KV_HOST"] = "changed"
	if again, _ := m.Ensure(t.Context(), "my-kv"); again["MY_KV_HOST"] != "127.0.0.1" {
		t.Error("a caller's edit leaked into the cache")
	}
	c, _ := eng.Inspect(t.Context(), ContainerName("unit", "my-kv"))
	for _, k := range []string{LabelManaged, LabelProject, LabelService, LabelRole, LabelConfig} {
		if c.Labels[k] == "" {
			t.Errorf("container lacks label %s: %v", k, c.Labels)
		}
	}
}

func TestRestartKeepsPorts(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	m := newTestManager(t, eng, kvSpec("kv"))
	before, err := m.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Down(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	after, err := m.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if before["KV_PORT"] != after["KV_PORT"] || eng.creates.Load() != 2 {
		t.Errorf("ports %v then %v (%d creates); want the old ports back on a new container", before, after, eng.creates.Load())
	}
}

func TestEnsureUnhealthy(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.health["kv:1"] = "unhealthy"
	m := newTestManager(t, eng, kvSpec("kv"))
	_, err := m.Ensure(t.Context(), "kv")
	if !errors.Is(err, ErrUnhealthy) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want ErrUnhealthy with the health output", err)
	}
	if st, _ := m.Cached("kv"); st.State != StateFailed || st.LastError == "" {
		t.Errorf("status = %+v", st)
	}
}

func TestEnsureTimeoutShowsLastCheck(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.health["kv:1"] = "starting"
	sp := kvSpec("kv")
	sp.StartTimeout = 300 * time.Millisecond
	m := newTestManager(t, eng, sp)
	_, err := m.Ensure(t.Context(), "kv")
	if !errors.Is(err, ErrUnhealthy) || !strings.Contains(err.Error(), "not healthy after 300ms") || !strings.Contains(err.Error(), "none ran yet") {
		t.Fatalf("err = %v", err)
	}
}

func TestManualPolicy(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	sp := kvSpec("kv")
	sp.Manual = true
	m := newTestManager(t, eng, sp)
	_, err := m.Ensure(t.Context(), "kv")
	if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "skillgate -c x.yaml services up kv") {
		t.Fatalf("err = %v", err)
	}
	if eng.creates.Load() != 0 {
		t.Error("a manual service was created on demand")
	}
	if err := m.Up(t.Context(), nil, false, "kv"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(t.Context(), "kv"); err != nil {
		t.Fatalf("after up: %v", err)
	}
}

func TestAdoptAfterCrash(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	m1, _ := New([]Spec{kvSpec("kv")}, Options{Project: "unit", Engine: eng})
	env1, err := m1.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	// m1 "crashes": never closed. A new manager adopts.
	m2 := newTestManager(t, eng, kvSpec("kv"))
	env2, err := m2.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if eng.creates.Load() != 1 || env1["KV_PORT"] != env2["KV_PORT"] {
		t.Errorf("creates = %d, env %v vs %v; want the container adopted", eng.creates.Load(), env1, env2)
	}
	// A changed definition replaces it.
	changed := kvSpec("kv")
	changed.Env = map[string]string{"MODE": "strict"}
	m3 := newTestManager(t, eng, changed)
	if _, err := m3.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if eng.creates.Load() != 2 {
		t.Errorf("creates = %d after a definition change, want 2", eng.creates.Load())
	}
	if list, _ := eng.Containers(t.Context(), nil); len(list) != 1 {
		t.Errorf("%d containers, want 1", len(list))
	}
}

func TestNeverTouchUnlabelled(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.containers["x"] = &Container{ID: "x", Name: ContainerName("unit", "kv"), Labels: map[string]string{"owner": "someone"}, State: "exited"}
	eng.containers["y"] = &Container{ID: "y", Name: "bystander", State: "exited"}
	m := newTestManager(t, eng, kvSpec("kv"))
	if _, err := m.Ensure(t.Context(), "kv"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("err = %v, want ErrNotOwned", err)
	}
	if _, err := m.Prune(t.Context(), PruneOptions{AllProjects: true, Volumes: true}); err != nil {
		t.Fatal(err)
	}
	if err := m.Down(t.Context()); err != nil {
		t.Fatal(err)
	}
	if eng.containers["x"] == nil || eng.containers["y"] == nil {
		t.Error("an unlabelled container was removed")
	}
}

func TestPruneAndClose(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	keep := kvSpec("keeper")
	keep.Keep = true
	vol := kvSpec("db")
	vol.Volumes = []Volume{{Source: "data", Target: "/data"}}
	m, err := New([]Spec{kvSpec("kv"), keep, vol}, Options{Project: "unit", Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(t.Context(), "kv", "keeper", "db"); err != nil {
		t.Fatal(err)
	}
	// A leftover of another project, stopped, and an orphan of ours.
	eng.containers["old"] = &Container{ID: "old", Name: "skillgate.other.kv", Labels: ownerLabels("other"), State: "exited"}
	eng.containers["orphan"] = &Container{ID: "orphan", Name: "skillgate.unit.gone", State: "running",
		Labels: withLabels("unit", LabelRole, RoleService, LabelService, "gone")}
	rep, err := m.Prune(t.Context(), PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Containers, []string{"skillgate.unit.gone"}) || len(rep.Volumes) != 0 {
		t.Errorf("prune = %+v, want only the orphan", rep)
	}
	if err := m.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range eng.containers {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"skillgate.other.kv", "skillgate.unit.keeper"}) {
		t.Errorf("after Close: %v, want the kept one and the other project's", names)
	}
	if _, ok := eng.volumes[VolumeName("unit", "data")]; !ok {
		t.Error("Close removed a volume")
	}
	if _, err := m.Ensure(t.Context(), "kv"); !errors.Is(err, ErrClosed) {
		t.Errorf("Ensure after Close: %v", err)
	}
}

func TestDependsOn(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.images["app:1"] = true
	app := Spec{Name: "app", Image: "app:1", DependsOn: map[string]string{"cache": ConditionHealthy}}
	m := newTestManager(t, eng, kvSpec("cache"), app)
	if _, err := m.Ensure(t.Context(), "app"); err != nil {
		t.Fatal(err)
	}
	c, err := eng.Inspect(t.Context(), ContainerName("unit", "cache"))
	if err != nil || !c.Running() {
		t.Fatalf("dependency not running: %v %+v", err, c)
	}
	if got := m.svcs["app"].env; !slices.Contains(got, "CACHE_HOST=cache") || !slices.Contains(got, "CACHE_PORT=6379") {
		t.Errorf("app's container env = %v", got)
	}
}

func TestBuildAndPullProgress(t *testing.T) {
	eng := newFake()
	built := Spec{Name: "b", Build: &Build{Context: t.TempDir()}}
	pulled := Spec{Name: "p", Image: "remote:1"}
	m := newTestManager(t, eng, built, pulled)
	var mu sync.Mutex
	var got []Progress
	err := m.Up(t.Context(), func(p Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }, false)
	if err != nil {
		t.Fatal(err)
	}
	if eng.builds.Load() != 1 || eng.pulls.Load() != 1 || len(got) != 2 {
		t.Fatalf("builds %d pulls %d progress %+v", eng.builds.Load(), eng.pulls.Load(), got)
	}
	if got[0].Service != "b" || got[0].Phase != "build" || got[1].Service != "p" || got[1].Phase != "pull" {
		t.Errorf("progress = %+v", got)
	}
	if err := m.Up(t.Context(), nil, false); err != nil || eng.builds.Load() != 1 {
		t.Errorf("second up built again (%d builds): %v", eng.builds.Load(), err)
	}
}

func TestNewRejects(t *testing.T) {
	cases := map[string]Spec{
		"flag image":    {Name: "a", Image: "--privileged"},
		"flag name":     {Name: "-a", Image: "x"},
		"host network":  {Name: "a", Image: "x", Network: "host"},
		"socket":        {Name: "a", Image: "x", Volumes: []Volume{{Source: "/var/run/docker.sock", Target: "/s", Bind: true}}},
		"parent of it":  {Name: "a", Image: "x", Volumes: []Volume{{Source: "/var/run", Target: "/s", Bind: true}}},
		"outside allow": {Name: "a", Image: "x", Volumes: []Volume{{Source: "/etc", Target: "/s", Bind: true}}},
		"self dep":      {Name: "a", Image: "x", DependsOn: map[string]string{"a": ""}},
		"unknown dep":   {Name: "a", Image: "x", DependsOn: map[string]string{"b": ""}},
		"restart":       {Name: "a", Image: "x", Restart: "--rm"},
		"env key":       {Name: "a", Image: "x", Env: map[string]string{"A=B": "c"}},
	}
	for name, sp := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New([]Spec{sp}, Options{Project: "unit", Engine: newFake(), AllowBinds: []string{"/srv"}})
			if !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("err = %v, want ErrInvalidSpec", err)
			}
		})
	}
	_, err := New([]Spec{{Name: "a", Image: "x", DependsOn: map[string]string{"b": ""}}, {Name: "b", Image: "x", DependsOn: map[string]string{"a": ""}}},
		Options{Project: "unit", Engine: newFake()})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: %v", err)
	}
	if _, err := New(nil, Options{Project: "-x"}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("project: %v", err)
	}
	if _, err := New([]Spec{{Name: "a", Image: "x", Volumes: []Volume{{Source: "/srv/data", Target: "/d", Bind: true}}}},
		Options{Project: "unit", Engine: newFake(), AllowBinds: []string{"/srv"}}); err != nil {
		t.Errorf("allowed bind: %v", err)
	}
}

func TestParsePort(t *testing.T) {
	for in, want := range map[string]Port{
		"5432":                 {Container: 5432, Protocol: "tcp"},
		"53/udp":               {Container: 53, Protocol: "udp"},
		"15432:5432":           {Container: 5432, Host: 15432, Protocol: "tcp"},
		"127.0.0.1:15432:5432": {Container: 5432, Host: 15432, Protocol: "tcp"},
	} {
		got, err := ParsePort(in)
		if err != nil || got != want {
			t.Errorf("ParsePort(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "65536", "-p", "0.0.0.0:80:80", "80/sctp", "a:b", "1:2:3:4", "080"} {
		if _, err := ParsePort(bad); err == nil {
			t.Errorf("ParsePort(%q) accepted", bad)
		}
	}
}

func TestParseVolume(t *testing.T) {
	for in, want := range map[string]Volume{
		"data:/var/lib/data":    {Source: "data", Target: "/var/lib/data"},
		"data:/d:ro":            {Source: "data", Target: "/d", ReadOnly: true},
		"./init:/init":          {Source: "/cfg/init", Target: "/init", Bind: true, ReadOnly: true},
		"/srv/x:/x:rw":          {Source: "/srv/x", Target: "/x", Bind: true},
		"../shared/a/../b:/b":   {Source: "/shared/b", Target: "/b", Bind: true, ReadOnly: true},
		"/var/run/:/sock:ro":    {Source: "/var/run", Target: "/sock", Bind: true, ReadOnly: true},
		"data_2-x:/data/inner/": {Source: "data_2-x", Target: "/data/inner/"},
	} {
		got, err := ParseVolume(in, "/cfg")
		if err != nil || got != want {
			t.Errorf("ParseVolume(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"data", "data:rel", "-v:/x", "~/x:/x", "a:/x:rx", "a:/../etc", ":/x"} {
		if _, err := ParseVolume(bad, "/cfg"); err == nil {
			t.Errorf("ParseVolume(%q) accepted", bad)
		}
	}
}

func TestServerContainerCommand(t *testing.T) {
	c := &ServerContainer{Project: "p", Server: "fs", Image: "mcp/fs:1", Args: []string{"--root", "/data"}, EnvNames: []string{"TOKEN", "A"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	cmd, args := c.Command()
	line := strings.Join(args, " ")
	if cmd != "docker" {
		t.Errorf("command %q", cmd)
	}
	for _, want := range []string{
		"run --rm -i --init --security-opt no-new-privileges --cap-drop ALL --network none --cpus 1 --memory 536870912 --pids-limit 256",
		"--label io.skillgate.managed=true", "--label io.skillgate.project=p", "--label io.skillgate.role=mcp-server", "--label io.skillgate.server=fs",
		"--name skillgate.p.mcp.fs -e A -e TOKEN mcp/fs:1 --root /data",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("args %q lack %q", line, want)
		}
	}
	for _, bad := range []ServerContainer{
		{Project: "p", Server: "fs", Image: "--privileged"},
		{Project: "p", Server: "-fs", Image: "x"},
		{Project: "p", Server: "fs", Image: "x", Network: "host"},
		{Project: "p", Server: "fs", Image: "x", EnvNames: []string{"A=b"}},
		{Project: "p", Server: "fs", Image: "x", Network: "bridge", ProjectNetwork: true},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("Check(%+v) accepted", bad)
		}
	}
	// A server that requires services joins the project's network.
	c.ProjectNetwork = true
	if _, args := c.Command(); !strings.Contains(strings.Join(args, " "), "--network skillgate.p ") {
		t.Errorf("with ProjectNetwork, args %q", args)
	}
}

func TestNetworkWiring(t *testing.T) {
	kv := Spec{Name: "my-kv", Image: "kv:1", Ports: []Port{{Container: 6379}, {Container: 9000, Protocol: "udp"}}}
	alone := Spec{Name: "alone", Image: "kv:1", Network: "none"}
	m, err := New([]Spec{kv, alone}, Options{Project: "p", Engine: newFake()})
	if err != nil {
		t.Fatal(err)
	}
	env, err := m.NetworkWiring("my-kv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"MY_KV_HOST": "my-kv", "MY_KV_PORT": "6379", "MY_KV_PORT_6379": "6379", "MY_KV_PORT_9000_UDP": "9000"}
	if !maps.Equal(env, want) {
		t.Errorf("NetworkWiring = %v, want %v", env, want)
	}
	if _, err := m.NetworkWiring("alone"); err == nil || !strings.Contains(err.Error(), "not the project's") {
		t.Errorf("a service on network none: %v", err)
	}
	if _, err := m.NetworkWiring("nope"); !errors.Is(err, ErrUnknownService) {
		t.Errorf("an unknown service: %v", err)
	}
}

func TestIsDockerSocket(t *testing.T) {
	for p, want := range map[string]bool{
		"/var/run/docker.sock": true, "/run/docker.sock": true, "/var/run": true, "/run": true, "/": true,
		"/var": true, "/home/u/.docker/run/docker.sock": true, "/srv/data": false, "/var/lib": false,
	} {
		if got := IsDockerSocket(p); got != want {
			t.Errorf("IsDockerSocket(%q) = %v", p, got)
		}
	}
}

// BenchmarkEnsureHealthy is the per-call dependency check of a tool whose
// service is already healthy: the cached path (target: well under 1 ms).
func BenchmarkEnsureHealthy(b *testing.B) {
	eng := newFake()
	eng.images["kv:1"] = true
	m, err := New([]Spec{kvSpec("kv")}, Options{Project: "unit", Engine: eng, HealthTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx := context.Background()
	if _, err := m.Ensure(ctx, "kv"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Ensure(ctx, "kv"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHandOver: a reloaded config's manager takes over the containers of
// the services it still declares (and stops them at its Close, on the same
// ports when it recreates them); the others stop, a kept one excepted.
func TestHandOver(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	keep := kvSpec("keeper")
	keep.Keep = true
	old, err := New([]Spec{kvSpec("kv"), kvSpec("gone"), keep}, Options{Project: "unit", Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	env, err := old.Ensure(t.Context(), "kv", "gone", "keeper")
	if err != nil {
		t.Fatal(err)
	}
	kvID := func() string {
		eng.mu.Lock()
		defer eng.mu.Unlock()
		for _, c := range eng.containers {
			if c.Name == "skillgate.unit.kv" {
				return c.ID
			}
		}
		return ""
	}
	before := kvID()
	changed := kvSpec("kv")
	changed.Env = map[string]string{"MODE": "two"}
	next, err := New([]Spec{changed}, Options{Project: "unit", Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.HandOver(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		eng.mu.Lock()
		defer eng.mu.Unlock()
		var out []string
		for _, c := range eng.containers {
			out = append(out, c.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"skillgate.unit.keeper", "skillgate.unit.kv"}) {
		t.Errorf("after the hand-over: %v; want kv (still declared) and keeper (keep: true)", got)
	}
	if _, err := old.Ensure(t.Context(), "kv"); !errors.Is(err, ErrClosed) {
		t.Errorf("the old manager after HandOver: %v", err)
	}
	// kv's definition changed: recreated on its next use, on its port.
	again, err := next.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if again["KV_PORT"] != env["KV_PORT"] {
		t.Errorf("kv moved from port %s to %s", env["KV_PORT"], again["KV_PORT"])
	}
	if id := kvID(); id == before {
		t.Errorf("kv was not recreated for its new definition (container %s)", id)
	}
	// next owns kv now: its Close stops it.
	if err := next.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"skillgate.unit.keeper"}) {
		t.Errorf("after the new manager's Close: %v; want only the kept one", got)
	}
}

// TestHandOverEndsStartsInFlight: a caller waiting on a start that a
// hand-over ends learns that the manager was closed (ErrClosed), not that
// the service failed, and the manager that took over adopts the container
// that start created instead of creating another.
func TestHandOverEndsStartsInFlight(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.health["kv:1"] = "starting" // never healthy until the test says so
	old, err := New([]Spec{kvSpec("kv")}, Options{Project: "unit", Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := old.Ensure(t.Context(), "kv")
		waited <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for eng.starts.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the start never reached the engine")
		}
		time.Sleep(5 * time.Millisecond)
	}
	next, err := New([]Spec{kvSpec("kv")}, Options{Project: "unit", Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { next.Close(context.Background()) })
	if err := old.HandOver(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, ErrClosed) || errors.Is(err, ErrUnhealthy) {
			t.Fatalf("the waiting caller got %v; want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting caller still waits after the hand-over")
	}
	eng.mu.Lock()
	eng.health["kv:1"] = "healthy"
	for _, c := range eng.containers {
		c.Health = "healthy"
	}
	eng.mu.Unlock()
	if _, err := next.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if n := eng.creates.Load(); n != 1 {
		t.Errorf("%d containers created; want the one the first start made, adopted", n)
	}
}

// TestDownKeepsNetwork: with KeepNetwork, downing every service leaves the
// project's network (image servers restart onto it); Close removes it.
func TestDownKeepsNetwork(t *testing.T) {
	for _, keep := range []bool{false, true} {
		eng := newFake()
		eng.images["kv:1"] = true
		m, err := New([]Spec{kvSpec("kv")}, Options{Project: "unit", Engine: eng, KeepNetwork: keep})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Ensure(t.Context(), "kv"); err != nil {
			t.Fatal(err)
		}
		if err := m.Down(t.Context()); err != nil {
			t.Fatal(err)
		}
		eng.mu.Lock()
		_, left := eng.networks[NetworkName("unit")]
		eng.mu.Unlock()
		if left != keep {
			t.Errorf("KeepNetwork %v: network left after Down: %v", keep, left)
		}
		if err := m.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		eng.mu.Lock()
		_, left = eng.networks[NetworkName("unit")]
		eng.mu.Unlock()
		if left {
			t.Errorf("KeepNetwork %v: network left after Close", keep)
		}
	}
}
