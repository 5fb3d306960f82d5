package services

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// fakeEngine is an in-memory Engine. Containers become healthy (or
// unhealthy, per image) as soon as they start; counters let tests check how
// often the manager called in.
type fakeEngine struct {
	mu         sync.Mutex
	containers map[string]*Container // by ID
	volumes    map[string]Object
	networks   map[string]Object
	images     map[string]bool
	nextID     int
	// health is the Health a started container of an image reports; ""
	// means no health check.
	health map[string]string
	// createDelay slows Create, to widen races.
	createDelay time.Duration
	// fault, when set, is asked before each call (op is the method's name,
	// arg its container, image or volume): a non-nil error fails the call.
	fault func(op, arg string) error

	creates, starts, inspects, builds, pulls atomic.Int32
}

var _ Engine = (*fakeEngine)(nil)

func newFake() *fakeEngine {
	return &fakeEngine{
		containers: map[string]*Container{}, volumes: map[string]Object{},
		networks: map[string]Object{}, images: map[string]bool{}, health: map[string]string{},
	}
}

func match(labels, filter map[string]string) bool {
	for k, v := range filter {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *fakeEngine) Ping(context.Context) (string, error) { return "1.41", nil }

func (f *fakeEngine) fail(op, arg string) error {
	if f.fault == nil {
		return nil
	}
	return f.fault(op, arg)
}

func (f *fakeEngine) Containers(_ context.Context, labels map[string]string) ([]Container, error) {
	if err := f.fail("Containers", ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Container
	for _, c := range f.containers {
		if match(c.Labels, labels) {
			out = append(out, *c)
		}
	}
	return out, nil
}

func (f *fakeEngine) find(idOrName string) *Container {
	if c := f.containers[idOrName]; c != nil {
		return c
	}
	for _, c := range f.containers {
		if c.Name == idOrName {
			return c
		}
	}
	return nil
}

func (f *fakeEngine) Inspect(_ context.Context, id string) (Container, error) {
	f.inspects.Add(1)
	if err := f.fail("Inspect", id); err != nil {
		return Container{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.find(id)
	if c == nil {
		return Container{}, fmt.Errorf("inspect %s: %w", id, ErrNotFound)
	}
	out := *c
	out.Ports = maps.Clone(c.Ports)
	return out, nil
}

func (f *fakeEngine) Create(_ context.Context, cc *ContainerConfig) (string, error) {
	f.creates.Add(1)
	time.Sleep(f.createDelay)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.find(cc.Name) != nil {
		return "", fmt.Errorf("create %s: %w", cc.Name, ErrConflict)
	}
	if !f.images[cc.Image] {
		return "", fmt.Errorf("create %s: image %s: %w", cc.Name, cc.Image, ErrNotFound)
	}
	f.nextID++
	id := fmt.Sprintf("%064d", f.nextID)
	c := &Container{ID: id, Name: cc.Name, Image: cc.Image, ImageID: "sha256:" + cc.Image, Labels: maps.Clone(cc.Labels), State: "created", Ports: map[string]int{}}
	for _, p := range cc.Ports {
		c.Ports[strconv.Itoa(p.Container)+"/"+p.Protocol] = p.Host
	}
	for _, m := range cc.Mounts {
		if m.Type == "volume" {
			c.Volumes = append(c.Volumes, m.Source)
		}
	}
	if cc.Network != "" {
		c.Networks = []string{cc.Network}
	}
	f.containers[id] = c
	return id, nil
}

func (f *fakeEngine) Start(_ context.Context, id string) error {
	f.starts.Add(1)
	if err := f.fail("Start", id); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.find(id)
	if c == nil {
		return fmt.Errorf("start %s: %w", id, ErrNotFound)
	}
	c.State = "running"
	c.Health = f.health[c.Image]
	if c.Health == "unhealthy" {
		c.HealthLog = "exit 1: connection refused"
	}
	return nil
}

func (f *fakeEngine) Stop(_ context.Context, id string, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.find(id)
	if c == nil {
		return fmt.Errorf("stop %s: %w", id, ErrNotFound)
	}
	c.State, c.Health = "exited", ""
	return nil
}

func (f *fakeEngine) Remove(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.find(id)
	if c == nil {
		return fmt.Errorf("remove %s: %w", id, ErrNotFound)
	}
	delete(f.containers, c.ID)
	return nil
}

func (f *fakeEngine) Logs(_ context.Context, id string, _ LogOptions, w io.Writer) error {
	_, err := io.WriteString(w, "log of "+id[len(id)-3:]+"\n")
	return err
}

func (f *fakeEngine) ImageID(_ context.Context, ref string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.images[ref] {
		return "", nil
	}
	return "sha256:" + ref, nil
}

func (f *fakeEngine) Pull(_ context.Context, ref string, fn func(Progress)) error {
	f.pulls.Add(1)
	if err := f.fail("Pull", ref); err != nil {
		return err
	}
	if fn != nil {
		fn(Progress{Phase: "pull", Current: 5, Total: 10, Message: "layer"})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[ref] = true
	return nil
}

func (f *fakeEngine) Build(_ context.Context, b *BuildConfig, fn func(Progress)) error {
	f.builds.Add(1)
	if fn != nil {
		fn(Progress{Phase: "build", Current: 1, Total: 2, Message: "Step 1/2 : FROM scratch"})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[b.Tag] = true
	return nil
}

func (f *fakeEngine) RemoveReplacedImage(context.Context, string) (bool, error) {
	return false, nil // its image IDs follow their tags: a rebuild replaces none
}

func (f *fakeEngine) ReplacedImages(context.Context, map[string]string) ([]string, error) {
	return nil, nil
}

func (f *fakeEngine) Volumes(_ context.Context, labels map[string]string) ([]Object, error) {
	if err := f.fail("Volumes", ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Object
	for _, v := range f.volumes {
		if match(v.Labels, labels) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (f *fakeEngine) CreateVolume(_ context.Context, name string, labels map[string]string) error {
	if err := f.fail("CreateVolume", name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.volumes[name]; !ok {
		f.volumes[name] = Object{Name: name, Labels: labels}
	}
	return nil
}

func (f *fakeEngine) RemoveVolume(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.volumes[name]; !ok {
		return fmt.Errorf("remove volume %s: %w", name, ErrNotFound)
	}
	for _, c := range f.containers {
		for _, v := range c.Volumes {
			if v == name {
				return fmt.Errorf("remove volume %s: in use: %w", name, ErrConflict)
			}
		}
	}
	delete(f.volumes, name)
	return nil
}

func (f *fakeEngine) Networks(_ context.Context, labels map[string]string) ([]Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Object
	for _, n := range f.networks {
		if !match(n.Labels, labels) {
			continue
		}
		for _, c := range f.containers {
			for _, cn := range c.Networks {
				if cn == n.Name {
					n.InUse = true
				}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

func (f *fakeEngine) CreateNetwork(_ context.Context, name string, labels map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.networks[name]; ok {
		return fmt.Errorf("create network %s: %w", name, ErrConflict)
	}
	f.networks[name] = Object{Name: name, Labels: labels}
	return nil
}

func (f *fakeEngine) RemoveNetwork(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.networks[name]; !ok {
		return fmt.Errorf("remove network %s: %w", name, ErrNotFound)
	}
	delete(f.networks, name)
	return nil
}
