package services

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ownedManager is a manager of the unit project with its own owner, as
// one skillgate process (a gateway, a one-shot command) has.
func ownedManager(t *testing.T, eng *fakeEngine, opts Options, specs ...Spec) *Manager {
	t.Helper()
	opts.Project, opts.Engine = "unit", eng
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Second
	}
	m, err := New(specs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// names returns the fake engine's container names, sorted.
func (f *fakeEngine) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.containers {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// presence returns the owners of the fake engine's presence markers.
func (f *fakeEngine) presence() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, v := range f.volumes {
		if v.Labels[LabelRole] == RolePresence {
			out = append(out, v.Labels[LabelOwner])
		}
	}
	return out
}

// deadOwner returns the owner id of a process of this machine and boot
// that no longer runs, as a gateway killed with -9 leaves behind.
func deadOwner(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a gone process is told apart through /proc, on Linux only")
	}
	o := self()
	if o.boot == "" || o.machine == "" || o.start == "" {
		t.Fatalf("this machine does not tell its boot, machine id or process start (%+v): owners are never gone", o)
	}
	o.pid, o.start, o.seq = 1<<22+7, "1", 1 // above pid_max's default ceiling
	if !processGone(o.String()) {
		t.Fatalf("owner %s is not gone", o)
	}
	if processGone(NewOwner()) {
		t.Fatal("this process's owner counts as gone")
	}
	return o.String()
}

// TestSecondProcessLeavesFirstAlone: a second skillgate process of the same
// project (a one-shot `skillgate call`, a second replica) adopts the
// running service and removes nothing of it when it stops; the first one
// then stops it; and while another process uses the project, a process
// that stops leaves even its own containers to the last one out.
func TestSecondProcessLeavesFirstAlone(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	first := ownedManager(t, eng, Options{}, kvSpec("kv"))
	env1, err := first.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	oneShot := ownedManager(t, eng, Options{}, kvSpec("kv"))
	env2, err := oneShot.Ensure(t.Context(), "kv")
	if err != nil {
		t.Fatal(err)
	}
	if eng.creates.Load() != 1 || env1["KV_PORT"] != env2["KV_PORT"] {
		t.Fatalf("%d creates, ports %v and %v; want kv adopted", eng.creates.Load(), env1, env2)
	}
	if err := oneShot.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := eng.names(); !slices.Equal(got, []string{"skillgate.unit.kv"}) {
		t.Fatalf("after the second process stopped: %v; want kv still running for the first", got)
	}
	if _, ok := eng.networks[NetworkName("unit")]; !ok {
		t.Error("the second process removed the project's network")
	}
	if _, err := first.Ensure(t.Context(), "kv"); err != nil {
		t.Errorf("the first process lost kv: %v", err)
	}

	// A replica adopts kv; the first process stops: kv stays for the
	// replica, and the replica, the last one out, removes it.
	replica := ownedManager(t, eng, Options{}, kvSpec("kv"))
	if _, err := replica.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := eng.names(); len(got) != 1 {
		t.Fatalf("after its creator stopped while a replica used it: %v; want kv running", got)
	}
	if err := replica.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := eng.names(); len(got) != 0 {
		t.Errorf("after the last process stopped: %v; want nothing", got)
	}
	if p := eng.presence(); len(p) != 0 {
		t.Errorf("presence markers left: %v", p)
	}
	if len(eng.networks) != 0 {
		t.Errorf("networks left: %v", eng.networks)
	}
}

// TestCloseLeavesServicesUp: containers `skillgate services up` started (a
// detached manager) carry no owner and survive a gateway that adopted
// them, also when the gateway had started an earlier container of the
// service itself and a reload made the service manual meanwhile.
func TestCloseLeavesServicesUp(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	owner := NewOwner()
	gw := ownedManager(t, eng, Options{Owner: owner}, kvSpec("kv"))
	if _, err := gw.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	// By hand: services down, then services up.
	cli := ownedManager(t, eng, Options{Detach: true}, kvSpec("kv"))
	if err := cli.Down(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if err := cli.Up(t.Context(), nil, false, "kv"); err != nil {
		t.Fatal(err)
	}
	c, _ := eng.Inspect(t.Context(), ContainerName("unit", "kv"))
	if o, ok := c.Labels[LabelOwner]; ok {
		t.Fatalf("services up labelled its container with owner %q", o)
	}
	// A reload makes kv manual; the gateway's next manager uses it.
	manual := kvSpec("kv")
	manual.Manual = true
	next := ownedManager(t, eng, Options{Owner: owner}, manual)
	if err := gw.HandOver(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	if _, err := next.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if err := next.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := eng.names(); !slices.Equal(got, []string{"skillgate.unit.kv"}) {
		t.Errorf("after the gateway stopped: %v; want the container services up started, running until services down", got)
	}
}

// TestCloseRemovesKilledOwners: a gateway killed with -9 leaves its service
// running and its presence marker; the next one adopts the service, and
// removes it and the stale marker when it stops.
func TestCloseRemovesKilledOwners(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	dead := deadOwner(t)
	killed := ownedManager(t, eng, Options{Owner: dead}, kvSpec("kv"))
	if _, err := killed.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	killed.shut() // dies without cleaning up
	if p := eng.presence(); !slices.Equal(p, []string{dead}) {
		t.Fatalf("presence %v", p)
	}
	next := ownedManager(t, eng, Options{}, kvSpec("kv"))
	if _, err := next.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if eng.creates.Load() != 1 {
		t.Errorf("%d creates; want the killed gateway's container adopted", eng.creates.Load())
	}
	if err := next.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := eng.names(); len(got) != 0 {
		t.Errorf("after the next gateway stopped: %v; want the killed one's container removed", got)
	}
	if p := eng.presence(); len(p) != 0 {
		t.Errorf("presence markers left: %v", p)
	}
}

// TestRemoveServersOwners: the start-up and shutdown cleanup of server
// containers removes this gateway's, a killed gateway's and stopped ones,
// never a running one of another live gateway or of no known owner.
func TestRemoveServersOwners(t *testing.T) {
	eng := newFake()
	dead := deadOwner(t)
	m := ownedManager(t, eng, Options{})
	other := NewOwner()
	for i, c := range []struct {
		owner, state string
	}{{m.owner, "running"}, {dead, "running"}, {other, "running"}, {"", "running"}, {other, "exited"}, {"", "exited"}, {other, "created"}} {
		labels := withLabels("unit", LabelRole, RoleServer, LabelServer, "s")
		if c.owner != "" {
			labels[LabelOwner] = c.owner
		}
		id := fmt.Sprintf("c%d", i)
		eng.containers[id] = &Container{ID: id, Name: fmt.Sprintf("srv%d", i), Labels: labels, State: c.state}
	}
	removed, err := m.RemoveServers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{"srv0", "srv1", "srv4", "srv5"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v (its own, the killed owner's, the stopped ones)", removed, want)
	}
	// Two gateways never share a server container's name.
	a, b := ServerContainerName("p", "fs", m.owner), ServerContainerName("p", "fs", other)
	if a == b || !strings.HasPrefix(a, "skillgate.p.mcp.fs.") {
		t.Errorf("server container names %q and %q", a, b)
	}
	sc := &ServerContainer{Project: "p", Server: "fs", Image: "x:1", Owner: m.owner}
	if err := sc.Check(); err != nil {
		t.Fatal(err)
	}
	if _, args := sc.Command(); !slices.Contains(args, LabelOwner+"="+m.owner) || !slices.Contains(args, a) {
		t.Errorf("args %v lack the owner label or the name %s", args, a)
	}
}

// logRecorder is a slog.Handler that keeps every record's level and message.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string // "INFO service ready"
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}

func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// count returns how many records were logged as "LEVEL message".
func (r *logRecorder) count(line string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if m == line {
			n++
		}
	}
	return n
}

var _ slog.Handler = (*logRecorder)(nil)

// TestRoutineCheckLogsQuietly: the per-call check of a healthy service,
// once health_ttl has passed, logs nothing at INFO; a change does.
func TestRoutineCheckLogsQuietly(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	rec := &logRecorder{}
	m := ownedManager(t, eng, Options{Logger: slog.New(rec), HealthTTL: time.Millisecond}, kvSpec("kv"))
	for range 5 {
		if _, err := m.Ensure(t.Context(), "kv"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond)
	}
	if n := rec.count("INFO service ready"); n != 1 {
		t.Errorf("%d INFO 'service ready' for one start and four routine checks, want 1: %v", n, rec.msgs)
	}
	if n := rec.count("INFO service adopted"); n != 0 {
		t.Errorf("%d INFO 'service adopted' for the manager's own container: %v", n, rec.msgs)
	}
	// Another manager adopting it is news.
	other := ownedManager(t, eng, Options{Logger: slog.New(rec)}, kvSpec("kv"))
	if _, err := other.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if n := rec.count("INFO service adopted"); n != 1 {
		t.Errorf("%d INFO 'service adopted' after another manager adopted kv, want 1", n)
	}
}

// TestFixedPortTaken: a fixed host port that is taken fails at once,
// naming the port as the config wrote it and what to do; nothing is
// retried and no "chosen port" is blamed.
func TestFixedPortTaken(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.fault = func(op, _ string) error {
		if op == "Start" {
			return errors.New("start: driver failed programming external connectivity: Bind for 127.0.0.1:28733 failed: port is already allocated")
		}
		return nil
	}
	rec := &logRecorder{}
	sp := kvSpec("kv")
	sp.Ports = []Port{{Container: 6379, Host: 28733, Protocol: "tcp", Origin: "skillgate.yaml:8:14"}}
	m := ownedManager(t, eng, Options{Logger: slog.New(rec)}, sp)
	_, err := m.Ensure(t.Context(), "kv")
	if err == nil {
		t.Fatal("started on a taken port")
	}
	for _, want := range []string{"host port 28733/tcp is taken", `"28733:6379"`, "skillgate.yaml:8:14", `write "6379"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if n := eng.creates.Load(); n != 1 {
		t.Errorf("%d creates; a fixed port cannot move, want 1", n)
	}
	for _, msg := range rec.msgs {
		if strings.Contains(msg, "choosing another") {
			t.Errorf("logged %q for a port the config fixed", msg)
		}
	}
}

// TestHintsNameTheConfig: the commands errors suggest carry -c FILE.
func TestHintsNameTheConfig(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	eng.health["kv:1"] = "unhealthy"
	m := ownedManager(t, eng, Options{CLI: "skillgate -c /srv/gw.yaml"}, kvSpec("kv"))
	_, err := m.Ensure(t.Context(), "kv")
	if err == nil || !strings.Contains(err.Error(), "see: skillgate -c /srv/gw.yaml services logs kv") {
		t.Errorf("err = %v; want the logs command with -c", err)
	}
}

// TestPullErrorSaysItOnce: a failed pull names the pull once, then what
// to do.
func TestPullErrorSaysItOnce(t *testing.T) {
	eng := newFake()
	eng.fault = func(op, ref string) error {
		if op == "Pull" {
			return fmt.Errorf("pull %s: dial tcp: lookup registry-1.docker.io: no such host", ref)
		}
		return nil
	}
	m := ownedManager(t, eng, Options{}, Spec{Name: "p", Image: "remote:1"})
	_, err := m.Ensure(t.Context(), "p")
	if err == nil || strings.Count(err.Error(), "pull remote:1") != 1 || !strings.Contains(err.Error(), "docker build -t remote:1") {
		t.Errorf("err = %v; want 'pull remote:1' once and the build hint", err)
	}
}

// TestMissingBuildContext: a build context that does not exist is said to
// be missing, not blamed on the engine.
func TestMissingBuildContext(t *testing.T) {
	eng := newFake()
	dir := t.TempDir() + "/nope"
	m := ownedManager(t, eng, Options{}, Spec{Name: "b", Build: &Build{Context: dir}})
	_, err := m.Ensure(t.Context(), "b")
	if err == nil || errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "build context "+dir+" is not a folder (it does not exist)") {
		t.Errorf("err = %v", err)
	}
	if eng.builds.Load() != 0 {
		t.Error("built from a missing context")
	}
}

// TestEngineDownSaidOnce: with the engine unreachable, Down of several
// services says so once, not once per service.
func TestEngineDownSaidOnce(t *testing.T) {
	eng := newFake()
	eng.fault = func(op, _ string) error {
		return fmt.Errorf("list containers: %w: Cannot connect to the Docker daemon", ErrNoEngine)
	}
	m := ownedManager(t, eng, Options{}, kvSpec("a"), kvSpec("b"), kvSpec("c"))
	err := m.Down(t.Context())
	if !errors.Is(err, ErrNoEngine) || strings.Count(err.Error(), "Cannot connect") != 1 {
		t.Errorf("err = %v; want the engine's error once", err)
	}
	if err := m.Remove(t.Context(), "a", "b"); !errors.Is(err, ErrNoEngine) || strings.Count(err.Error(), "Cannot connect") != 1 {
		t.Errorf("Remove: %v; want the engine's error once", err)
	}
}

// TestRemoveOnlyServiceDropsNetwork: rm of the project's only service
// leaves no network behind, like down of all does.
func TestRemoveOnlyServiceDropsNetwork(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	m := ownedManager(t, eng, Options{}, kvSpec("kv"))
	if _, err := m.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if len(eng.networks) != 0 {
		t.Errorf("networks after rm of the only service: %v", eng.networks)
	}
}

// TestRecentDoesNotTrustOldHealth: Recent, which /readyz and services__ls
// use, asks the engine again once health_ttl has passed: a container
// removed behind the gateway's back is not reported healthy, and an
// engine that does not answer makes the state unknown.
func TestRecentDoesNotTrustOldHealth(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	m := ownedManager(t, eng, Options{HealthTTL: 20 * time.Millisecond}, kvSpec("kv"))
	if _, err := m.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if st := m.Recent(t.Context()); st[0].State != StateHealthy {
		t.Fatalf("Recent = %+v", st)
	}
	eng.mu.Lock()
	clear(eng.containers) // docker rm -f behind the gateway's back
	eng.mu.Unlock()
	time.Sleep(30 * time.Millisecond)
	if st := m.Recent(t.Context()); st[0].State != StateStopped {
		t.Errorf("Recent after the container went = %s, want stopped", st[0].State)
	}
	if _, err := m.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	eng.fault = func(string, string) error { return fmt.Errorf("inspect: %w: connection refused", ErrNoEngine) }
	time.Sleep(30 * time.Millisecond)
	st := m.Recent(t.Context())
	if st[0].State != StateUnknown || !strings.Contains(st[0].LastError, "connection refused") {
		t.Errorf("Recent with the engine down = %+v, want unknown with the reason", st[0])
	}
}

// TestPruneReportEmptyLists: an empty prune report has empty lists, not
// nulls, in JSON.
func TestPruneReportEmptyLists(t *testing.T) {
	m := ownedManager(t, newFake(), Options{}, kvSpec("kv"))
	rep, err := m.Prune(t.Context(), PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	if bytes.Contains(b, []byte("null")) {
		t.Errorf("prune report %s", b)
	}
}

// TestDownClearsMarkers: a presence marker whose process cannot be told
// gone (another machine, a platform without /proc) keeps every process of
// the project from removing what it created; a `services down` of every
// service clears it, and a process still running marks itself again on
// its next use of a service.
func TestDownClearsMarkers(t *testing.T) {
	eng := newFake()
	eng.images["kv:1"] = true
	foreign := "elsewhere/42/1////"
	eng.volumes[PresenceName("unit", foreign)] = Object{Name: PresenceName("unit", foreign),
		Labels: withLabels("unit", LabelRole, RolePresence, LabelOwner, foreign)}
	gw := ownedManager(t, eng, Options{HealthTTL: time.Millisecond}, kvSpec("kv"))
	if _, err := gw.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	cli := ownedManager(t, eng, Options{Detach: true}, kvSpec("kv"))
	if err := cli.Down(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past health_ttl: the next use asks the engine
	if p := eng.presence(); len(p) != 0 {
		t.Errorf("presence markers after down of everything: %v", p)
	}
	if _, err := gw.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	if p := eng.presence(); len(p) != 1 || p[0] != gw.owner {
		t.Errorf("presence markers after the gateway's next use: %v; want its own", p)
	}
	if err := gw.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := eng.names(); len(got) != 0 {
		t.Errorf("after the gateway stopped: %v; want its container removed", got)
	}
}
