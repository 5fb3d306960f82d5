package services

import (
	"context"
	"io"
	"time"
)

// Engine is the part of a container engine the Manager uses. NewDockerEngine
// returns the real one; tests use a fake. Every method may be called
// concurrently. Methods that find nothing return an error wrapping
// ErrNotFound; Create returns one wrapping ErrConflict when the name is taken.
// List methods return only objects carrying every label of the filter.
type Engine interface {
	// Ping checks that the engine answers and returns the API version spoken.
	Ping(ctx context.Context) (apiVersion string, err error)

	// Containers lists containers, running or not, with all the labels.
	Containers(ctx context.Context, labels map[string]string) ([]Container, error)
	// Inspect returns a container by ID or name.
	Inspect(ctx context.Context, idOrName string) (Container, error)
	// Create creates a container without starting it and returns its ID.
	Create(ctx context.Context, c *ContainerConfig) (string, error)
	// Start starts a created or stopped container.
	Start(ctx context.Context, id string) error
	// Stop stops a container, killing it after timeout.
	Stop(ctx context.Context, id string, timeout time.Duration) error
	// Remove removes a container, running or not, with its anonymous volumes.
	Remove(ctx context.Context, id string) error
	// Logs copies a container's output (stdout and stderr, demultiplexed) to
	// w; with follow it returns when the container stops or ctx is done.
	Logs(ctx context.Context, id string, opts LogOptions, w io.Writer) error

	// ImageID returns the ID of the local image ref, or "" when there is none.
	ImageID(ctx context.Context, ref string) (string, error)
	// Pull pulls ref, reporting progress to fn (which may be nil).
	Pull(ctx context.Context, ref string, fn func(Progress)) error
	// Build builds an image, reporting progress to fn (which may be nil).
	Build(ctx context.Context, b *BuildConfig, fn func(Progress)) error
	// RemoveReplacedImage removes image id if it is one skillgate built
	// (LabelManaged) that no longer has a tag, as when a rebuild of its tag
	// replaced it, and reports whether it did; any other image is left
	// alone. It fails wrapping ErrConflict while a container uses the image.
	RemoveReplacedImage(ctx context.Context, id string) (bool, error)
	// ReplacedImages lists the IDs of the images with all these labels that
	// no longer have a tag.
	ReplacedImages(ctx context.Context, labels map[string]string) ([]string, error)

	// Volumes lists volumes with all the labels.
	Volumes(ctx context.Context, labels map[string]string) ([]Object, error)
	// CreateVolume creates a named volume.
	CreateVolume(ctx context.Context, name string, labels map[string]string) error
	// RemoveVolume removes a volume; it fails while a container uses it.
	RemoveVolume(ctx context.Context, name string) error

	// Networks lists networks with all the labels.
	Networks(ctx context.Context, labels map[string]string) ([]Object, error)
	// CreateNetwork creates a bridge network.
	CreateNetwork(ctx context.Context, name string, labels map[string]string) error
	// RemoveNetwork removes a network; it fails while a container uses it.
	RemoveNetwork(ctx context.Context, name string) error
}

// Container is what the Manager needs to know of a container.
type Container struct {
	ID    string
	Name  string // without the leading slash
	Image string // as given at create
	// ImageID is the ID of the image it runs (set by Inspect).
	ImageID string
	Labels  map[string]string
	// State is created, running, paused, restarting, removing, exited or dead.
	State    string
	ExitCode int
	// StartedAt is when it last started, by the engine's clock (set by
	// Inspect; zero when the engine does not say).
	StartedAt time.Time
	// Health is "" (no health check), starting, healthy or unhealthy.
	Health string
	// HealthLog is the output of the last health check, with its exit code.
	HealthLog string
	// Ports maps "5432/tcp" to the host port it is published on.
	Ports map[string]int
	// Volumes are the names of the named volumes it mounts.
	Volumes []string
	// Networks are the names of the networks it is attached to.
	Networks []string
}

// Running reports whether the container runs.
func (c *Container) Running() bool { return c.State == "running" }

// Object is a volume or a network.
type Object struct {
	Name   string
	Labels map[string]string
	// InUse is set when a container uses it (networks only; volumes leave it
	// false and the Manager works it out from containers).
	InUse bool
}

// ContainerConfig is what Create needs.
type ContainerConfig struct {
	Name    string
	Image   string
	Cmd     []string
	Env     []string // KEY=value
	Labels  map[string]string
	Ports   []Port // Host is always set here
	Mounts  []Mount
	Health  *Healthcheck
	Restart string
	// NanoCPUs, Memory and PIDs are limits; zero means none.
	NanoCPUs int64
	Memory   int64
	PIDs     int64
	// Network is a network name or mode ("none", "bridge", or a network the
	// Manager created); Aliases are its DNS names there.
	Network string
	Aliases []string
	Init    bool
}

// Mount is a volume or bind mount of a container.
type Mount struct {
	// Type is "volume" or "bind".
	Type     string
	Source   string
	Target   string
	ReadOnly bool
}

// BuildConfig is what Build needs.
type BuildConfig struct {
	Context    string // a folder
	Dockerfile string // relative to Context
	Tag        string
	Args       map[string]string
	Labels     map[string]string
}

// LogOptions select a container's output.
type LogOptions struct {
	// Follow keeps streaming until the container stops or ctx is done.
	Follow bool
	// Tail is how many lines from the end; 0 means all.
	Tail int
	// Timestamps prefixes each line with its time.
	Timestamps bool
}

// Progress reports an image pull or build.
type Progress struct {
	// Service is the service the image is for ("" for a bare pull).
	Service string
	// Phase is "pull" or "build".
	Phase string
	// Current and Total are bytes for a pull and steps for a build; Total is
	// 0 when unknown.
	Current, Total int64
	// Message is a human-readable status line.
	Message string
}
