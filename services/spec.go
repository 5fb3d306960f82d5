package services

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spec is one service: a container the gateway starts when a tool, server,
// pipeline or skill that requires it is used. Its fields follow a compose
// file's service entry. The gateway fills it from skillgate.yaml; paths are
// absolute by then.
type Spec struct {
	// Name is the service's name, unique in its project.
	Name string
	// Image is the image to run, or the tag a Build produces. With Build set
	// and Image empty the tag is chosen from the project and Name.
	Image string
	// Build, when set, builds Image from a local Dockerfile.
	Build *Build
	// Command overrides the image's command (CMD).
	Command []string
	// Env is the container's environment. Values may be secrets: they are
	// never logged.
	Env map[string]string
	// Ports are the container ports published on 127.0.0.1.
	Ports []Port
	// Volumes are named volumes and bind mounts.
	Volumes []Volume
	// Healthcheck overrides the image's health check; nil keeps it.
	Healthcheck *Healthcheck
	// DependsOn maps a service to the condition it must reach before this one
	// starts: ConditionStarted or ConditionHealthy.
	DependsOn map[string]string
	// Restart is the restart policy: "no" (the default), "always",
	// "unless-stopped", "on-failure" or "on-failure:N".
	Restart string
	// CPUs, Memory (bytes) and PIDs limit the container; zero means no limit.
	CPUs   float64
	Memory int64
	PIDs   int64
	// Network is "" (the project's network, where services reach each other
	// by name), "bridge" (Docker's default network) or "none".
	Network string
	// Manual services are never started on demand: Ensure fails with the
	// command that starts them.
	Manual bool
	// Keep leaves the container running when the gateway shuts down.
	Keep bool
	// StartTimeout bounds the wait for the container to become healthy;
	// zero means the manager's default.
	StartTimeout time.Duration
}

// Build says how to build a service's image.
type Build struct {
	// Context is the folder sent to the engine (absolute).
	Context string
	// Dockerfile is relative to Context; the default is "Dockerfile".
	Dockerfile string
	// Args are build arguments (ARG).
	Args map[string]string
}

// Port is a published container port.
type Port struct {
	// Container is the port inside the container.
	Container int
	// Host is the port on 127.0.0.1; 0 lets the manager pick a free one.
	Host int
	// Protocol is "tcp" (the default) or "udp".
	Protocol string
	// Origin is where the port was written, such as "skillgate.yaml:12",
	// for messages; it plays no part in the container.
	Origin string
}

// Volume is a mount: a named volume (Bind false) or a host folder (Bind true).
type Volume struct {
	// Source is the volume's short name (the manager prefixes it with the
	// project) or an absolute host path.
	Source string
	// Target is the absolute path inside the container.
	Target string
	// Bind is true for a host path.
	Bind bool
	// ReadOnly mounts it read-only.
	ReadOnly bool
}

// Healthcheck is a Docker health check.
type Healthcheck struct {
	// Test is ["CMD", prog, args...], ["CMD-SHELL", "command"] or ["NONE"].
	Test []string
	// Interval between checks; zero means DefaultHealthInterval.
	Interval time.Duration
	// Timeout of one check; zero means Docker's default (30s).
	Timeout time.Duration
	// StartPeriod is a grace period in which failures do not count.
	StartPeriod time.Duration
	// Retries is how many failures in a row make the container unhealthy;
	// zero means Docker's default (3).
	Retries int
}

// Conditions a dependency must reach (Spec.DependsOn).
const (
	ConditionStarted = "service_started"
	ConditionHealthy = "service_healthy"
)

// DefaultHealthInterval is the health check interval when a Healthcheck
// sets none. Docker's default is 30s, far too slow for a caller waiting on
// an on-demand start.
const DefaultHealthInterval = time.Second

var (
	nameRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`) })
	projectRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`) })
	// imageRe is a conservative image reference: registry/path:tag@digest,
	// at most 255 bytes (checked apart: a {0,254} repeat would compile into
	// 254 copies of the class, a millisecond of every process's start).
	imageRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$`) })
	restartRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(no|always|unless-stopped|on-failure(:[0-9]+)?)$`) })
	envKeyRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.]*$`) })
	ownerRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_.-]+(/[a-zA-Z0-9_.:-]*){6}$`) })
	unsafeRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_.-]+`) })
)

// ValidName reports whether name may name a service or a server: letters,
// digits, _ and -, not starting with - or _.
func ValidName(name string) bool { return nameRe().MatchString(name) }

// ValidProject reports whether p may name a project: lower-case letters,
// digits, _ and -, starting with a letter or digit, at most 40 characters.
func ValidProject(p string) bool { return projectRe().MatchString(p) }

// ValidImage reports whether ref looks like an image reference and cannot
// be mistaken for a flag.
func ValidImage(ref string) bool { return len(ref) <= 255 && imageRe().MatchString(ref) }

// ValidRestart reports whether r is a restart policy Docker accepts.
func ValidRestart(r string) bool { return r == "" || restartRe().MatchString(r) }

// ParsePort reads a compose-style port: "5432", "5432/udp", "15432:5432" or
// "127.0.0.1:15432:5432". The host address, when given, must be 127.0.0.1:
// services are never published beyond loopback.
func ParsePort(s string) (Port, error) {
	p := Port{Protocol: "tcp"}
	body, proto, ok := strings.Cut(s, "/")
	if ok {
		if proto != "tcp" && proto != "udp" {
			return p, fmt.Errorf("%q: protocol %q is not tcp or udp", s, proto)
		}
		p.Protocol = proto
	}
	parts := strings.Split(body, ":")
	switch len(parts) {
	case 1:
	case 2:
	case 3:
		if parts[0] != "127.0.0.1" && parts[0] != "localhost" {
			return p, fmt.Errorf("%q: ports are published on 127.0.0.1 only; drop %q", s, parts[0]+":")
		}
		parts = parts[1:]
	default:
		return p, fmt.Errorf("%q is not a port; write 5432, 15432:5432 or 5432/udp", s)
	}
	num := func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 || v != strconv.Itoa(n) {
			return 0, fmt.Errorf("%q: %q is not a port number from 1 to 65535", s, v)
		}
		return n, nil
	}
	var err error
	if p.Container, err = num(parts[len(parts)-1]); err != nil {
		return p, err
	}
	if len(parts) == 2 {
		if p.Host, err = num(parts[0]); err != nil {
			return p, err
		}
	}
	return p, nil
}

// String writes the port back in the form ParsePort reads.
func (p Port) String() string {
	s := strconv.Itoa(p.Container)
	if p.Host != 0 {
		s = strconv.Itoa(p.Host) + ":" + s
	}
	if p.Protocol != "" && p.Protocol != "tcp" {
		s += "/" + p.Protocol
	}
	return s
}

// ParseVolume reads a compose-style volume: "name:/path" (a named volume)
// or "./dir:/path" / "/abs/dir:/path" (a bind mount, relative to base),
// with an optional ":ro" or ":rw". Bind mounts are read-only unless ":rw"
// says otherwise; named volumes are writable unless ":ro".
func ParseVolume(s, base string) (Volume, error) {
	parts := strings.Split(s, ":")
	var mode string
	switch len(parts) {
	case 2:
	case 3:
		mode = parts[2]
		if mode != "ro" && mode != "rw" {
			return Volume{}, fmt.Errorf("%q: mode %q is not ro or rw", s, mode)
		}
	default:
		return Volume{}, fmt.Errorf("%q is not a volume; write name:/path or ./dir:/path[:ro|:rw]", s)
	}
	v := Volume{Source: parts[0], Target: parts[1]}
	if !strings.HasPrefix(v.Target, "/") || strings.Contains(v.Target, "..") {
		return v, fmt.Errorf("%q: the container path %q must be absolute and free of \"..\"", s, v.Target)
	}
	switch {
	case v.Source == "":
		return v, fmt.Errorf("%q: no source; write name:/path or ./dir:/path", s)
	case strings.HasPrefix(v.Source, "/") || strings.HasPrefix(v.Source, ".") || strings.HasPrefix(v.Source, "~"):
		if strings.HasPrefix(v.Source, "~") {
			return v, fmt.Errorf("%q: ~ is not expanded; write the absolute path or one relative to the config file", s)
		}
		v.Bind = true
		if !filepath.IsAbs(v.Source) {
			v.Source = filepath.Join(base, v.Source)
		}
		v.Source = filepath.Clean(v.Source)
		v.ReadOnly = mode != "rw"
	default:
		if !nameRe().MatchString(v.Source) {
			return v, fmt.Errorf("%q: volume name %q must be letters, digits, _ or -, starting with a letter or digit", s, v.Source)
		}
		v.ReadOnly = mode == "ro"
	}
	return v, nil
}

// String writes the volume in the form ParseVolume reads.
func (v Volume) String() string {
	mode := "rw"
	if v.ReadOnly {
		mode = "ro"
	}
	return v.Source + ":" + v.Target + ":" + mode
}

// EnvPrefix is the prefix of the variables that wire a service into its
// users: the upper-cased name with - turned into _ ("my-db" -> "MY_DB").
func EnvPrefix(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

// check reports the first problem of s that would make it unsafe or
// impossible to run. The gateway's config validation says the same with
// file positions; this is the manager's own guard.
func (s *Spec) check(allowBinds []string) error {
	if !nameRe().MatchString(s.Name) {
		return fmt.Errorf("%w: service name %q must be letters, digits, _ or -, starting with a letter or digit", ErrInvalidSpec, s.Name)
	}
	if s.Image == "" && s.Build == nil {
		return fmt.Errorf("%w: service %s has neither image nor build", ErrInvalidSpec, s.Name)
	}
	if s.Image != "" && !ValidImage(s.Image) {
		return fmt.Errorf("%w: service %s: %q is not an image reference", ErrInvalidSpec, s.Name, s.Image)
	}
	if s.Build != nil && !filepath.IsAbs(s.Build.Context) {
		return fmt.Errorf("%w: service %s: build context %q is not absolute", ErrInvalidSpec, s.Name, s.Build.Context)
	}
	switch s.Network {
	case "", "bridge", "none":
	default:
		return fmt.Errorf("%w: service %s: network %q is not allowed; use bridge or none, or leave it out", ErrInvalidSpec, s.Name, s.Network)
	}
	if !ValidRestart(s.Restart) {
		return fmt.Errorf("%w: service %s: restart %q is not no, always, unless-stopped or on-failure[:N]", ErrInvalidSpec, s.Name, s.Restart)
	}
	for k := range s.Env {
		if !envKeyRe().MatchString(k) {
			return fmt.Errorf("%w: service %s: %q is not an environment variable name", ErrInvalidSpec, s.Name, k)
		}
	}
	for _, v := range s.Volumes {
		if !v.Bind {
			continue
		}
		if IsDockerSocket(v.Source) {
			return fmt.Errorf("%w: service %s: mounting the Docker socket %s gives the container the whole engine; it is never allowed", ErrInvalidSpec, s.Name, v.Source)
		}
		if !BindAllowed(v.Source, allowBinds) {
			return fmt.Errorf("%w: service %s: bind mount %s is outside docker.allow_binds", ErrInvalidSpec, s.Name, v.Source)
		}
	}
	for d := range s.DependsOn {
		if d == s.Name {
			return fmt.Errorf("%w: service %s depends on itself", ErrInvalidSpec, s.Name)
		}
	}
	return nil
}

// IsDockerSocket reports whether a host path is, or contains, the Docker
// engine's socket.
func IsDockerSocket(path string) bool {
	p := filepath.Clean(path)
	for _, sock := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
		if p == sock || strings.HasPrefix(sock, p+"/") || p == "/" {
			return true
		}
	}
	return strings.HasSuffix(p, "/docker.sock")
}

// BindAllowed reports whether host path p lies inside one of the allowed
// folders (absolute, cleaned).
func BindAllowed(p string, allow []string) bool {
	p = filepath.Clean(p)
	for _, a := range allow {
		a = filepath.Clean(a)
		if p == a || strings.HasPrefix(p, a+string(filepath.Separator)) || a == "/" {
			return true
		}
	}
	return false
}

// hash identifies everything that shapes the container, so an adopted
// container made from an older definition is recreated.
func (s *Spec) hash(image string) string {
	type view struct {
		Image       string
		Command     []string
		Env         []string
		Ports       []string
		Volumes     []string
		Health      *Healthcheck
		Restart     string
		CPUs        float64
		Memory      int64
		PIDs        int64
		Network     string
		DependsOnTo []string
	}
	v := view{Image: image, Command: s.Command, Restart: s.Restart, CPUs: s.CPUs,
		Memory: s.Memory, PIDs: s.PIDs, Network: s.Network, Health: s.Healthcheck}
	for k, val := range s.Env {
		v.Env = append(v.Env, k+"="+val)
	}
	slices.Sort(v.Env)
	for _, p := range s.Ports {
		if p.Host != 0 {
			v.Ports = append(v.Ports, p.String())
		} else {
			v.Ports = append(v.Ports, Port{Container: p.Container, Protocol: p.Protocol}.String())
		}
	}
	for _, vol := range s.Volumes {
		v.Volumes = append(v.Volumes, vol.String())
	}
	for d := range s.DependsOn {
		v.DependsOnTo = append(v.DependsOnTo, d)
	}
	slices.Sort(v.DependsOnTo)
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
