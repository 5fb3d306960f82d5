package services

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"
)

// This file is the only one in the repository that imports the Docker
// client. Switching to github.com/moby/moby/client touches nothing else.

// dockerEngine is the Engine of a Docker daemon.
type dockerEngine struct {
	c *client.Client

	mu         sync.Mutex
	negotiated bool
}

var _ Engine = (*dockerEngine)(nil)

// NewDockerEngine connects to the Docker engine named by the environment
// (DOCKER_HOST, DOCKER_API_VERSION, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY;
// the default is the local socket), negotiating the API version down to
// what the engine speaks (Debian's 20.10 speaks 1.41). It does not dial;
// Ping does.
func NewDockerEngine() (Engine, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoEngine, err)
	}
	return &dockerEngine{c: c}, nil
}

// wrap maps the engine's error classes onto the package's sentinels.
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("%s: %w: %v", op, ErrNotFound, err)
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("%s: %w: %v", op, ErrConflict, err)
	case client.IsErrConnectionFailed(err):
		return fmt.Errorf("%s: %w: %v (start dockerd, or set DOCKER_HOST to an engine that runs; see docs/SERVICES.md)", op, ErrNoEngine, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// ready negotiates the API version once, before the first call. The
// client negotiates lazily on a first request, but some of its calls read
// the version before that, racing with a concurrent first request that
// writes it.
func (d *dockerEngine) ready(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.negotiated {
		return
	}
	if p, err := d.c.Ping(ctx); err == nil {
		d.c.NegotiateAPIVersionPing(p)
		d.negotiated = true
	}
}

func labelFilter(labels map[string]string) filters.Args {
	f := filters.NewArgs()
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	return f
}

func (d *dockerEngine) Ping(ctx context.Context) (string, error) {
	p, err := d.c.Ping(ctx)
	if err != nil {
		return "", wrap("ping", err)
	}
	d.mu.Lock()
	d.c.NegotiateAPIVersionPing(p)
	d.negotiated = true
	d.mu.Unlock()
	return d.c.ClientVersion(), nil
}

func (d *dockerEngine) Containers(ctx context.Context, labels map[string]string) ([]Container, error) {
	d.ready(ctx)
	list, err := d.c.ContainerList(ctx, container.ListOptions{All: true, Filters: labelFilter(labels)})
	if err != nil {
		return nil, wrap("list containers", err)
	}
	out := make([]Container, 0, len(list))
	for _, s := range list {
		c := Container{ID: s.ID, Image: s.Image, Labels: s.Labels, State: string(s.State)}
		if len(s.Names) > 0 {
			c.Name = strings.TrimPrefix(s.Names[0], "/")
		}
		for _, m := range s.Mounts {
			if m.Type == mount.TypeVolume {
				c.Volumes = append(c.Volumes, m.Name)
			}
		}
		if s.NetworkSettings != nil {
			for n := range s.NetworkSettings.Networks {
				c.Networks = append(c.Networks, n)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func (d *dockerEngine) Inspect(ctx context.Context, id string) (Container, error) {
	d.ready(ctx)
	r, err := d.c.ContainerInspect(ctx, id)
	if err != nil {
		return Container{}, wrap("inspect "+id, err)
	}
	c := Container{ID: r.ID, Name: strings.TrimPrefix(r.Name, "/"), ImageID: r.Image, Ports: map[string]int{}}
	if r.Config != nil {
		c.Image, c.Labels = r.Config.Image, r.Config.Labels
	}
	if st := r.State; st != nil {
		c.State, c.ExitCode = string(st.Status), st.ExitCode
		c.StartedAt, _ = time.Parse(time.RFC3339Nano, st.StartedAt) // zero when it never started
		if h := st.Health; h != nil {
			c.Health = string(h.Status)
			if n := len(h.Log); n > 0 {
				last := h.Log[n-1]
				c.HealthLog = fmt.Sprintf("exit %d", last.ExitCode)
				if out := strings.TrimSpace(last.Output); out != "" {
					c.HealthLog += ": " + out
				}
			}
		}
	}
	if r.HostConfig != nil {
		for p, bs := range r.HostConfig.PortBindings {
			for _, b := range bs {
				if n, err := strconv.Atoi(b.HostPort); err == nil && n > 0 {
					c.Ports[string(p)] = n
				}
			}
		}
	}
	for _, m := range r.Mounts {
		if m.Type == mount.TypeVolume {
			c.Volumes = append(c.Volumes, m.Name)
		}
	}
	if r.NetworkSettings != nil {
		for n := range r.NetworkSettings.Networks {
			c.Networks = append(c.Networks, n)
		}
	}
	return c, nil
}

func (d *dockerEngine) Create(ctx context.Context, cc *ContainerConfig) (string, error) {
	d.ready(ctx)
	cfg := &container.Config{
		Image: cc.Image, Env: cc.Env, Labels: cc.Labels,
		ExposedPorts: nat.PortSet{},
	}
	if len(cc.Cmd) > 0 {
		cfg.Cmd = cc.Cmd
	}
	if h := cc.Health; h != nil {
		cfg.Healthcheck = &container.HealthConfig{
			Test: h.Test, Interval: h.Interval, Timeout: h.Timeout,
			StartPeriod: h.StartPeriod, Retries: h.Retries,
		}
	}
	hc := &container.HostConfig{
		NetworkMode:  container.NetworkMode(cc.Network),
		PortBindings: nat.PortMap{},
		Init:         &cc.Init,
	}
	hc.NanoCPUs, hc.Memory = cc.NanoCPUs, cc.Memory
	if cc.PIDs > 0 {
		hc.PidsLimit = &cc.PIDs
	}
	if r := cc.Restart; r != "" {
		name, max, _ := strings.Cut(r, ":")
		hc.RestartPolicy.Name = container.RestartPolicyMode(name)
		hc.RestartPolicy.MaximumRetryCount, _ = strconv.Atoi(max)
	}
	for _, p := range cc.Ports {
		port := nat.Port(fmt.Sprintf("%d/%s", p.Container, p.Protocol))
		cfg.ExposedPorts[port] = struct{}{}
		hc.PortBindings[port] = append(hc.PortBindings[port], nat.PortBinding{HostIP: "127.0.0.1", HostPort: strconv.Itoa(p.Host)})
	}
	for _, m := range cc.Mounts {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.Type(m.Type), Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	var nc *network.NetworkingConfig
	if len(cc.Aliases) > 0 {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			cc.Network: {Aliases: cc.Aliases},
		}}
	}
	r, err := d.c.ContainerCreate(ctx, cfg, hc, nc, nil, cc.Name)
	if err != nil {
		return "", wrap("create container "+cc.Name, err)
	}
	return r.ID, nil
}

func (d *dockerEngine) Start(ctx context.Context, id string) error {
	d.ready(ctx)
	return wrap("start "+id, d.c.ContainerStart(ctx, id, container.StartOptions{}))
}

func (d *dockerEngine) Stop(ctx context.Context, id string, timeout time.Duration) error {
	d.ready(ctx)
	secs := int(timeout.Round(time.Second) / time.Second)
	return wrap("stop "+id, d.c.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}))
}

func (d *dockerEngine) Remove(ctx context.Context, id string) error {
	d.ready(ctx)
	return wrap("remove "+id, d.c.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}))
}

func (d *dockerEngine) Logs(ctx context.Context, id string, o LogOptions, w io.Writer) error {
	d.ready(ctx)
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: o.Follow, Timestamps: o.Timestamps}
	if o.Tail > 0 {
		opts.Tail = strconv.Itoa(o.Tail)
	}
	rc, err := d.c.ContainerLogs(ctx, id, opts)
	if err != nil {
		return wrap("logs "+id, err)
	}
	defer rc.Close()
	// Containers without a TTY (all of ours) multiplex stdout and stderr.
	if _, err := stdcopy.StdCopy(w, w, rc); err != nil && ctx.Err() == nil {
		return wrap("logs "+id, err)
	}
	return nil
}

func (d *dockerEngine) ImageID(ctx context.Context, ref string) (string, error) {
	d.ready(ctx)
	r, err := d.c.ImageInspect(ctx, ref)
	switch {
	case err == nil:
		return r.ID, nil
	case cerrdefs.IsNotFound(err):
		return "", nil
	}
	return "", wrap("inspect image "+ref, err)
}

func (d *dockerEngine) RemoveReplacedImage(ctx context.Context, id string) (bool, error) {
	d.ready(ctx)
	r, err := d.c.ImageInspect(ctx, id)
	switch {
	case cerrdefs.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, wrap("inspect image "+id, err)
	case len(r.RepoTags) > 0 || r.Config == nil || r.Config.Labels[LabelManaged] != "true":
		return false, nil
	}
	if _, err := d.c.ImageRemove(ctx, id, image.RemoveOptions{PruneChildren: true}); err != nil {
		if cerrdefs.IsNotFound(err) {
			return false, nil
		}
		return false, wrap("remove image "+id, err)
	}
	return true, nil
}

func (d *dockerEngine) ReplacedImages(ctx context.Context, labels map[string]string) ([]string, error) {
	d.ready(ctx)
	f := labelFilter(labels)
	f.Add("dangling", "true")
	list, err := d.c.ImageList(ctx, image.ListOptions{Filters: f})
	if err != nil {
		return nil, wrap("list images", err)
	}
	ids := make([]string, 0, len(list))
	for _, im := range list {
		ids = append(ids, im.ID)
	}
	return ids, nil
}

func (d *dockerEngine) Pull(ctx context.Context, ref string, fn func(Progress)) error {
	d.ready(ctx)
	rc, err := d.c.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return wrap("pull "+ref, err)
	}
	defer rc.Close()
	// Bytes per layer, summed: Docker reports each layer on its own.
	type layer struct{ cur, total int64 }
	layers := map[string]*layer{}
	return readMessages(rc, func(m *message) {
		if fn == nil {
			return
		}
		if m.ID != "" && m.Progress != nil && m.Progress.Total > 0 {
			l := layers[m.ID]
			if l == nil {
				l = &layer{}
				layers[m.ID] = l
			}
			l.cur, l.total = m.Progress.Current, m.Progress.Total
		}
		var p Progress
		p.Phase = "pull"
		for _, l := range layers {
			p.Current += l.cur
			p.Total += l.total
		}
		p.Message = strings.TrimSpace(strings.TrimSpace(m.ID + " " + m.Status))
		fn(p)
	})
}

var stepRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Step (\d+)/(\d+) :`) })

func (d *dockerEngine) Build(ctx context.Context, b *BuildConfig, fn func(Progress)) error {
	d.ready(ctx)
	pr, pw := io.Pipe()
	tarErr := make(chan error, 1)
	go func() {
		err := tarDir(pw, b.Context)
		tarErr <- err // before the pipe fails the request
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	args := map[string]*string{}
	for k, v := range b.Args {
		args[k] = &v
	}
	dockerfile := b.Dockerfile
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	r, err := d.c.ImageBuild(ctx, pr, build.ImageBuildOptions{
		Tags: []string{b.Tag}, Dockerfile: filepath.ToSlash(dockerfile), BuildArgs: args,
		Labels: b.Labels, Remove: true, ForceRemove: true, Version: build.BuilderV1,
	})
	if err != nil {
		// A context that cannot be read fails the upload, which the client
		// reports as a connection failure: say what really happened.
		select {
		case terr := <-tarErr:
			if terr != nil {
				return fmt.Errorf("build %s: %w", b.Tag, terr)
			}
		default:
		}
		return wrap("build "+b.Tag, err)
	}
	defer r.Body.Close()
	var tail []string
	var step, steps int64
	err = readMessages(r.Body, func(m *message) {
		line := strings.TrimRight(m.Stream, "\n")
		if line == "" {
			return
		}
		tail = append(tail, line)
		if len(tail) > 10 {
			tail = tail[1:]
		}
		if fn == nil {
			return
		}
		if s := stepRe().FindStringSubmatch(line); s != nil {
			step, _ = strconv.ParseInt(s[1], 10, 64)
			steps, _ = strconv.ParseInt(s[2], 10, 64)
		}
		fn(Progress{Phase: "build", Message: strings.TrimSpace(line), Current: step, Total: steps})
	})
	if err != nil {
		return fmt.Errorf("build %s: %w\n%s", b.Tag, err, strings.Join(tail, "\n"))
	}
	return nil
}

// message is one line of a pull or build stream.
type message struct {
	Stream   string `json:"stream"`
	Status   string `json:"status"`
	ID       string `json:"id"`
	Progress *struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
	Error *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
	ErrorMessage string `json:"error"`
}

// readMessages decodes a JSON message stream, calling fn for each, and
// returns the first error message the engine sent.
func readMessages(r io.Reader, fn func(*message)) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if m.Error != nil && m.Error.Message != "" {
			return errors.New(m.Error.Message)
		}
		if m.ErrorMessage != "" {
			return errors.New(m.ErrorMessage)
		}
		fn(&m)
	}
}

// tarDir writes dir as a tar stream, the build context: regular files,
// folders and symlinks, with .git left out.
func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		var link string
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // sockets, devices, pipes
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("build context %s: %w", dir, err)
	}
	return tw.Close()
}

func (d *dockerEngine) Volumes(ctx context.Context, labels map[string]string) ([]Object, error) {
	d.ready(ctx)
	r, err := d.c.VolumeList(ctx, volume.ListOptions{Filters: labelFilter(labels)})
	if err != nil {
		return nil, wrap("list volumes", err)
	}
	out := make([]Object, 0, len(r.Volumes))
	for _, v := range r.Volumes {
		out = append(out, Object{Name: v.Name, Labels: v.Labels})
	}
	return out, nil
}

func (d *dockerEngine) CreateVolume(ctx context.Context, name string, labels map[string]string) error {
	d.ready(ctx)
	_, err := d.c.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels})
	return wrap("create volume "+name, err)
}

func (d *dockerEngine) RemoveVolume(ctx context.Context, name string) error {
	d.ready(ctx)
	return wrap("remove volume "+name, d.c.VolumeRemove(ctx, name, false))
}

func (d *dockerEngine) Networks(ctx context.Context, labels map[string]string) ([]Object, error) {
	d.ready(ctx)
	list, err := d.c.NetworkList(ctx, network.ListOptions{Filters: labelFilter(labels)})
	if err != nil {
		return nil, wrap("list networks", err)
	}
	out := make([]Object, 0, len(list))
	for _, n := range list {
		// The list does not fill Containers; inspect says who uses it.
		o := Object{Name: n.Name, Labels: n.Labels}
		if ins, err := d.c.NetworkInspect(ctx, n.ID, network.InspectOptions{}); err == nil {
			o.InUse = len(ins.Containers) > 0
		}
		out = append(out, o)
	}
	return out, nil
}

func (d *dockerEngine) CreateNetwork(ctx context.Context, name string, labels map[string]string) error {
	d.ready(ctx)
	_, err := d.c.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge", Labels: labels})
	return wrap("create network "+name, err)
}

func (d *dockerEngine) RemoveNetwork(ctx context.Context, name string) error {
	d.ready(ctx)
	return wrap("remove network "+name, d.c.NetworkRemove(ctx, name))
}
