package services_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// coldStartEngine is the real engine with Build and Create watched, to
// replay two gateway replicas that start one built service at the same
// moment: the first build waits until the other replica wants the image
// too (it builds, or waits on the service's lock), and a second build
// waits until the first container exists — the order in which the second
// replica used to take the first one's fresh container for a stale one.
type coldStartEngine struct {
	services.Engine

	mu      sync.Mutex
	builds  int
	built   []string // the image IDs the builds made
	created []string // the IDs of the containers created

	other     chan struct{} // closed when the other replica wants the image
	otherOnce sync.Once
	firstMade chan struct{} // closed when the first container exists
	madeOnce  sync.Once
}

func newColdStartEngine(t *testing.T) *coldStartEngine {
	t.Helper()
	eng, err := services.NewDockerEngine()
	if err != nil {
		t.Fatal(err)
	}
	return &coldStartEngine{Engine: eng, other: make(chan struct{}), firstMade: make(chan struct{})}
}

// wanted records that the other replica wants the image.
func (e *coldStartEngine) wanted() { e.otherOnce.Do(func() { close(e.other) }) }

func (e *coldStartEngine) Build(ctx context.Context, b *services.BuildConfig, fn func(services.Progress)) error {
	e.mu.Lock()
	e.builds++
	n := e.builds
	e.mu.Unlock()
	wait := e.other
	if n > 1 {
		e.wanted()
		wait = e.firstMade
		// Two builds that run at once share no cache and make two images;
		// one after the other, the second would reuse the first's layers.
		// A label of its own gives this one its own image, as then.
		bc := *b
		bc.Labels = maps.Clone(b.Labels)
		bc.Labels["test.build"] = strconv.Itoa(n)
		b = &bc
	}
	select {
	case <-wait:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := e.Engine.Build(ctx, b, fn); err != nil {
		return err
	}
	id, err := e.Engine.ImageID(ctx, b.Tag)
	e.mu.Lock()
	e.built = append(e.built, id)
	e.mu.Unlock()
	return err
}

func (e *coldStartEngine) Create(ctx context.Context, cc *services.ContainerConfig) (string, error) {
	id, err := e.Engine.Create(ctx, cc)
	if err == nil {
		e.mu.Lock()
		e.created = append(e.created, id)
		e.mu.Unlock()
		e.madeOnce.Do(func() { close(e.firstMade) })
	}
	return id, err
}

// TestDockerReplicasColdStartTogether: two managers of one project (two
// gateway replicas on one machine) that bring up a built service at the
// same moment converge on one container: neither removes the other's,
// neither fails, and no second image is left dangling.
func TestDockerReplicasColdStartTogether(t *testing.T) {
	testenv.Docker(t)
	proj := project(t)
	tag := fmt.Sprintf("skillgate-test/kvreplicas:%d", os.Getpid())
	_ = exec.Command("docker", "image", "rm", "-f", tag).Run()
	eng := newColdStartEngine(t)
	t.Cleanup(func() {
		_ = exec.Command("docker", "image", "rm", "-f", tag).Run()
		eng.mu.Lock()
		defer eng.mu.Unlock()
		for _, id := range eng.built {
			_ = exec.Command("docker", "image", "rm", "-f", id).Run()
		}
	})
	sp := kvSpec(t, "kv")
	sp.Image = tag
	locks := t.TempDir()
	var ms []*services.Manager
	for range 2 {
		m, err := services.New([]services.Spec{sp}, services.Options{Project: proj, Engine: eng, StopTimeout: time.Second, LockDir: locks})
		if err != nil {
			t.Fatal(err)
		}
		services.SetLockWaitHook(m, func(string) { eng.wanted() })
		ms = append(ms, m)
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.Close(context.Background())
		}
		testenv.WaitNoContainers(t, 10*time.Second, "label="+services.LabelProject+"="+proj)
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { _, errs[i] = m.Ensure(ctx, "kv") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i+1, err)
		}
	}
	eng.mu.Lock()
	created, built := eng.created, eng.built
	eng.mu.Unlock()
	if len(created) == 0 {
		t.Fatal("no container was created")
	}
	running := testenv.Containers(t, "label="+services.LabelProject+"="+proj, "status=running")
	got := testenv.DockerCLI(t, "inspect", "-f", "{{.Id}}", services.ContainerName(proj, "kv"))
	if len(created) != 1 || len(running) != 1 || got != created[0] {
		t.Errorf("containers created %v, running %v (%s); want the first one created to be the only one, running", created, running, got)
	}
	current := testenv.DockerCLI(t, "image", "inspect", "-f", "{{.Id}}", tag)
	for _, id := range built {
		if id == current {
			continue
		}
		if err := exec.Command("docker", "image", "inspect", id).Run(); err == nil {
			t.Errorf("image %s, built as %s but no longer tagged, is left behind (builds made %v)", id, tag, built)
		}
	}
}

// lyingEngine is the real engine, except that Inspect does not find the
// service container that exists: every create then collides with it.
type lyingEngine struct {
	services.Engine
	name string
}

func (e *lyingEngine) Inspect(ctx context.Context, id string) (services.Container, error) {
	if id == e.name {
		return services.Container{}, fmt.Errorf("inspect %s: %w", id, services.ErrNotFound)
	}
	return e.Engine.Inspect(ctx, id)
}

// TestDockerCreateOrAdoptSaysWhy: when no attempt to create or adopt the
// container succeeds, the error says what the last one ran into.
func TestDockerCreateOrAdoptSaysWhy(t *testing.T) {
	proj := project(t)
	first := newManager(t, proj, kvSpec(t, "kv"))
	if _, err := first.Ensure(t.Context(), "kv"); err != nil {
		t.Fatal(err)
	}
	real, err := services.NewDockerEngine()
	if err != nil {
		t.Fatal(err)
	}
	cname := services.ContainerName(proj, "kv")
	m, err := services.New([]services.Spec{kvSpec(t, "kv")}, services.Options{
		Project: proj, Engine: &lyingEngine{Engine: real, name: cname}, StopTimeout: time.Second, LockDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	_, err = m.Ensure(t.Context(), "kv")
	if err == nil {
		t.Fatal("the start succeeded though every create collides")
	}
	t.Log(err)
	if !errors.Is(err, services.ErrConflict) || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("error %q does not carry the engine's reason (want %v and its text)", err, services.ErrConflict)
	}
}
