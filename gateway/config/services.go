package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/graph"
	"github.com/skillgate/skillgate/services"

	"gopkg.in/yaml.v3"
)

// Service is a Docker container that tools, servers, pipelines and skills
// depend on. The keys follow a compose file's service entry (see
// docs/SERVICES.md).
type Service struct {
	// Image is the container image, such as "postgres:16"; with Build it is
	// the tag the build produces.
	Image string `yaml:"image"`
	// Build builds the image from a local Dockerfile.
	Build *Build `yaml:"build"`
	// Command overrides the image's command.
	Command []string `yaml:"command,flow"`
	// Env is the container's environment; values are never logged.
	Env map[string]string `yaml:"env"`
	// Ports are container ports published on 127.0.0.1: "5432" (the gateway
	// picks a free host port), "15432:5432" or "5432/udp".
	Ports []string `yaml:"ports,flow"`
	// Volumes are "name:/path" (a named volume, writable unless :ro) or
	// "./dir:/path" (a bind mount from docker.allow_binds, read-only unless :rw).
	Volumes []string `yaml:"volumes"`
	// Healthcheck says when the container is ready.
	Healthcheck *Healthcheck `yaml:"healthcheck"`
	// DependsOn names services to start first, with the condition they must
	// reach: service_started or service_healthy (the default). Compose's
	// short form, a list of names, means service_started for each.
	DependsOn DependsOnMap `yaml:"depends_on"`
	// Restart is no (the default), always, unless-stopped or on-failure[:N].
	Restart string `yaml:"restart"`
	// CPUs, Memory and PIDs limit the container.
	CPUs   CPUs `yaml:"cpus"`
	Memory Size `yaml:"memory"`
	PIDs   int  `yaml:"pids"`
	// Network is "" (the project's network, where services reach each other
	// by name), "bridge" or "none".
	Network string `yaml:"network"`
	// Policy is "auto" (the default: started when first needed) or "manual"
	// (never started by the gateway; a call fails with the command to run).
	Policy string `yaml:"policy"`
	// Keep leaves the container running when the gateway stops.
	Keep bool `yaml:"keep"`
	// StartTimeout bounds the wait until healthy; the default is docker.start_timeout.
	StartTimeout Duration `yaml:"start_timeout"`
	// Privileged is never allowed; the key exists to say so clearly.
	Privileged bool `yaml:"privileged"`
	// Pos is where the entry was defined.
	Pos Pos `yaml:"-"`
	// Problem, set only by ParseForServices and LoadForServices, is why
	// the service cannot start: the ${VAR}s not set in its definition,
	// with file:line.
	Problem error `yaml:"-" json:"-"`
}

// Build says how to build a service's image.
type Build struct {
	// Context is the folder sent to the engine, relative to the config file.
	Context string `yaml:"context"`
	// Dockerfile is relative to Context; the default is Dockerfile.
	Dockerfile string `yaml:"dockerfile"`
	// Args are build arguments.
	Args map[string]string `yaml:"args"`
}

// DependsOnMap is a service's depends_on: dependencies by name. In YAML it
// is a mapping (name: {condition: ...}) or, as compose allows, a list of
// names, each then with condition service_started (compose's meaning of
// the short form).
type DependsOnMap map[string]*DependsOn

// decodeNode reads either form.
func (m *DependsOnMap) decodeNode(d *decoder, n *yaml.Node, field string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.SequenceNode {
		d.decodeMap(n, reflect.ValueOf(m).Elem(), field)
		return
	}
	if *m == nil {
		*m = DependsOnMap{}
	}
	for i, item := range n.Content {
		for item.Kind == yaml.AliasNode {
			item = item.Alias
		}
		f := fmt.Sprintf("%s[%d]", field, i)
		name, ok := d.scalar(item, f, "a service name")
		if !ok {
			continue
		}
		key := join(field, name)
		if _, dup := (*m)[name]; dup {
			d.fail(item, key, nil, "%s is listed twice; remove one", name)
			continue
		}
		if d.pos != nil {
			d.pos[key] = d.at(item)
		}
		(*m)[name] = &DependsOn{Condition: services.ConditionStarted}
	}
}

// DependsOn is one entry of a service's depends_on.
type DependsOn struct {
	// Condition is service_healthy (the default) or service_started.
	Condition string `yaml:"condition"`
}

// Healthcheck is a Docker health check, as in a compose file.
type Healthcheck struct {
	// Test is the check command, such as ["CMD", "pg_isready"],
	// ["CMD-SHELL", "pg_isready -U app"] or ["NONE"].
	Test []string `yaml:"test,flow"`
	// Interval is the time between checks; the default is 1s (compose: 30s).
	Interval Duration `yaml:"interval"`
	// Timeout is how long one check may take.
	Timeout Duration `yaml:"timeout"`
	// StartPeriod is a grace period in which failures do not count.
	StartPeriod Duration `yaml:"start_period"`
	// Retries is how many failures in a row make the container unhealthy.
	Retries int `yaml:"retries"`
}

// Docker holds the settings of services and server containers.
type Docker struct {
	// Project names this configuration's containers, volumes and networks
	// (a label and a name prefix). The default is derived from the config
	// file's path, so two configs never share containers.
	Project string `yaml:"project"`
	// AllowBinds are the host folders bind mounts may come from, relative
	// to the config file. Nothing else can be mounted.
	AllowBinds []string `yaml:"allow_binds,flow"`
	// StartTimeout bounds the wait until a service is healthy; the default is 2m.
	StartTimeout Duration `yaml:"start_timeout"`
	// HealthTTL is how long a healthy service is trusted without asking the
	// engine again, on the per-call dependency check; the default is 2s.
	HealthTTL Duration `yaml:"health_ttl"`
}

// CPUs is a number of CPUs written as 1, 0.5 or "1.5".
type CPUs float64

// String returns the number as written.
func (c CPUs) String() string { return strconv.FormatFloat(float64(c), 'f', -1, 64) }

// MarshalText writes the number.
func (c CPUs) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a non-negative number of CPUs.
func (c *CPUs) UnmarshalText(b []byte) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil || v < 0 || v > 1024 {
		return fmt.Errorf("%q is not a number of CPUs; write 1, 0.5 or 2", b)
	}
	*c = CPUs(v)
	return nil
}

// fromFile reports whether c was read from a file (not stdin or built in).
func (c *Config) fromFile() bool { return c.Source != "" && !strings.HasPrefix(c.Source, "<") }

// baseDir is the folder relative paths are resolved against.
func (c *Config) baseDir() string {
	if c.Source == "" || strings.HasPrefix(c.Source, "<") {
		return "."
	}
	return filepath.Dir(c.Source)
}

// resolvePath resolves p against the config file's folder.
func (c *Config) resolvePath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	abs, err := filepath.Abs(filepath.Join(c.baseDir(), p))
	if err != nil {
		return filepath.Join(c.baseDir(), p)
	}
	return abs
}

// AllowedBinds returns docker.allow_binds as absolute folders.
func (c *Config) AllowedBinds() []string {
	out := make([]string, 0, len(c.Docker.AllowBinds))
	for _, p := range c.Docker.AllowBinds {
		out = append(out, c.resolvePath(p))
	}
	return out
}

var projectUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9_-]+`) })

// DockerProject returns docker.project, or one derived from the config
// file's real path (symlinks resolved, so every way of naming the file
// gives one project): its folder's name and a short hash ("shop-3fa2c1").
// The built-in default config's project is "default".
func (c *Config) DockerProject() string {
	if c.Docker.Project != "" {
		return c.Docker.Project
	}
	if !c.fromFile() {
		return "default"
	}
	abs, err := filepath.Abs(c.Source)
	if err != nil {
		abs = c.Source
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	base := strings.Trim(projectUnsafe().ReplaceAllString(strings.ToLower(filepath.Base(filepath.Dir(abs))), "-"), "-_")
	if len(base) > 24 {
		base = base[:24]
	}
	if base == "" {
		base = "skillgate"
	}
	return base + "-" + hex.EncodeToString(sum[:3])
}

// ServiceSpecs returns the services as the services package runs them,
// with paths resolved. Call it on a validated config.
func (c *Config) ServiceSpecs() []services.Spec {
	out := make([]services.Spec, 0, len(c.Services))
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		s := c.Services[name]
		sp := services.Spec{
			Name: name, Image: s.Image, Command: s.Command, Env: s.Env,
			Restart: s.Restart, CPUs: float64(s.CPUs), Memory: int64(s.Memory), PIDs: int64(s.PIDs),
			Network: s.Network, Manual: s.Policy == "manual", Keep: s.Keep,
			StartTimeout: time.Duration(s.StartTimeout),
		}
		if b := s.Build; b != nil {
			sp.Build = &services.Build{Context: c.resolvePath(b.Context), Dockerfile: b.Dockerfile, Args: b.Args}
		}
		for i, p := range s.Ports {
			if port, err := services.ParsePort(p); err == nil {
				port.Origin = c.where(fmt.Sprintf("services.%s.ports[%d]", name, i)).String()
				sp.Ports = append(sp.Ports, port)
			}
		}
		for _, v := range s.Volumes {
			if vol, err := services.ParseVolume(v, c.resolvePath(".")); err == nil {
				sp.Volumes = append(sp.Volumes, vol)
			}
		}
		if h := s.Healthcheck; h != nil {
			sp.Healthcheck = &services.Healthcheck{
				Test: h.Test, Interval: time.Duration(h.Interval), Timeout: time.Duration(h.Timeout),
				StartPeriod: time.Duration(h.StartPeriod), Retries: h.Retries,
			}
		}
		if len(s.DependsOn) > 0 {
			sp.DependsOn = map[string]string{}
			for d, cond := range s.DependsOn {
				c := services.ConditionHealthy
				if cond != nil && cond.Condition != "" {
					c = cond.Condition
				}
				sp.DependsOn[d] = c
			}
		}
		out = append(out, sp)
	}
	return out
}

// ServerContainer returns how an image server runs, or nil for a server
// without image.
func (c *Config) ServerContainer(name string) *services.ServerContainer {
	s := c.Servers[name]
	if s == nil || s.Image == "" {
		return nil
	}
	sc := &services.ServerContainer{
		Project: c.DockerProject(), Server: name, Image: s.Image, Args: s.Args,
		Network: s.Network, CPUs: float64(s.CPUs), Memory: int64(s.Memory), PIDs: int64(s.PIDs),
		ProjectNetwork: len(s.Requires) > 0,
	}
	for k := range s.Env {
		sc.EnvNames = append(sc.EnvNames, k)
	}
	slices.Sort(sc.EnvNames)
	return sc
}

// flagLike reports a value that a command line would read as an option.
func flagLike(s string) bool { return strings.HasPrefix(s, "-") }

var (
	envNameRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.]*$`) })
	healthKinds = []string{"CMD", "CMD-SHELL", "NONE"}
)

// service checks one service entry.
func (v *validator) service(name string, s *Service) {
	f := "services." + name
	if !services.ValidName(name) {
		v.about(v.errorf(f, "service name %q must be 1-64 letters, digits, _ or -, starting with a letter or digit; rename it", name))
	}
	if s == nil {
		s = &Service{}
	}
	switch {
	case s.Image == "" && s.Build == nil:
		v.unset(v.errorf(f+".image", "no image; set image: such as postgres:16, or build: with a context folder"), f)
	case s.Image != "" && !services.ValidImage(s.Image):
		v.errorf(f+".image", "%q is not an image reference; write it as name:tag, such as postgres:16", s.Image)
	}
	if b := s.Build; b != nil {
		if b.Context == "" {
			v.unset(v.errorf(f+".build.context", "no context; name the folder holding the Dockerfile, relative to the config file"), f+".build")
		}
		if flagLike(b.Dockerfile) || filepath.IsAbs(b.Dockerfile) || strings.Contains(b.Dockerfile, "..") {
			v.errorf(f+".build.dockerfile", "%q must be a file name inside the build context", b.Dockerfile)
		}
		v.buildContext(f, b)
		v.envNames(f+".build.args", b.Args)
	}
	if s.Privileged {
		v.errorf(f+".privileged", "privileged containers are never allowed: they own the host; remove it")
	}
	v.envNames(f+".env", s.Env)
	for i, p := range s.Ports {
		if _, err := services.ParsePort(p); err != nil {
			v.errorf(fmt.Sprintf("%s.ports[%d]", f, i), "%v", err)
		}
	}
	if len(s.Ports) > 0 && s.Network == "none" {
		v.errorf(f+".ports", "ports cannot be published with network: none; remove one of them")
	}
	allow := v.c.AllowedBinds()
	for i, raw := range s.Volumes {
		fi := fmt.Sprintf("%s.volumes[%d]", f, i)
		vol, err := services.ParseVolume(raw, v.c.resolvePath("."))
		switch {
		case err != nil:
			v.errorf(fi, "%v", err)
		case vol.Bind && services.IsDockerSocket(vol.Source):
			v.errorf(fi, "mounting %s exposes the Docker socket, which gives the container the whole engine; it is never allowed", vol.Source)
		case vol.Bind && !services.BindAllowed(vol.Source, allow):
			src, _, _ := strings.Cut(raw, ":")
			allowed := "empty"
			if len(v.c.Docker.AllowBinds) > 0 {
				allowed = strings.Join(v.c.Docker.AllowBinds, ", ")
			}
			v.errorf(fi, "bind mount of %s is outside docker.allow_binds (%s); add its folder there or use a named volume", src, allowed)
		}
	}
	switch s.Network {
	case "", "bridge", "none":
	case "host":
		v.errorf(f+".network", "host networking is never allowed: the container would see every host port; use bridge or leave it out")
	default:
		v.errorf(f+".network", "unknown value %q; use bridge or none (or leave it out for the project's network)", s.Network)
	}
	if !services.ValidRestart(s.Restart) {
		v.errorf(f+".restart", "unknown value %q; use no, always, unless-stopped or on-failure[:N]", s.Restart)
	}
	v.oneOf(f+".policy", s.Policy, "", "auto", "manual")
	v.limitsNotNegative(f, s.CPUs, s.Memory, s.PIDs)
	if s.StartTimeout < 0 {
		v.errorf(f+".start_timeout", "%s is negative; use a positive duration such as 60s", s.StartTimeout)
	}
	for _, d := range slices.Sorted(maps.Keys(s.DependsOn)) {
		fd := f + ".depends_on." + d
		switch _, ok := v.c.Services[d]; {
		case d == name:
			v.errorf(fd, "a service cannot depend on itself; remove %s from its depends_on", d)
		case !ok:
			v.errorf(fd, "unknown service %q; name another service of services:", d)
		}
		if c := s.DependsOn[d]; c != nil {
			v.oneOf(fd+".condition", c.Condition, "", services.ConditionHealthy, services.ConditionStarted)
		}
	}
	if h := s.Healthcheck; h != nil {
		if len(h.Test) == 0 || !slices.Contains(healthKinds, h.Test[0]) {
			v.errorf(f+".healthcheck.test", `the test must start with "CMD", "CMD-SHELL" or "NONE", such as [CMD, pg_isready]`)
		} else if h.Test[0] != "NONE" && len(h.Test) < 2 {
			v.errorf(f+".healthcheck.test", "%s needs a command after it", h.Test[0])
		}
		for key, d := range map[string]Duration{"interval": h.Interval, "timeout": h.Timeout, "start_period": h.StartPeriod} {
			if d < 0 {
				v.errorf(f+".healthcheck."+key, "%s is negative; use a positive duration such as 5s", d)
			}
		}
		if h.Retries < 0 {
			v.errorf(f+".healthcheck.retries", "%d is negative; use 0 or more", h.Retries)
		}
	}
}

// limitsNotNegative checks the cpus, memory and pids of the entry at f,
// each at its own line.
func (v *validator) limitsNotNegative(f string, cpus CPUs, memory Size, pids int) {
	if cpus < 0 {
		v.errorf(f+".cpus", "%s is negative; use a number of CPUs such as 0.5, or leave it out for no limit", cpus)
	}
	if memory < 0 {
		v.errorf(f+".memory", "%d is negative; use a size such as 256MiB, or leave it out for no limit", memory)
	}
	if pids < 0 {
		v.errorf(f+".pids", "%d is negative; use a number of processes such as 100, or leave it out for no limit", pids)
	}
}

// build checks a service's build: its context must be a folder.
func (v *validator) buildContext(f string, b *Build) {
	if b.Context == "" || !v.c.fromFile() {
		return
	}
	switch fi, err := os.Stat(v.c.resolvePath(b.Context)); {
	case errors.Is(err, fs.ErrNotExist):
		v.errorf(f+".build.context", "folder %s does not exist (paths are relative to the config file); create it or fix the path", b.Context)
	case err != nil:
		v.errorf(f+".build.context", "cannot read folder %s: %v", b.Context, err)
	case !fi.IsDir():
		v.errorf(f+".build.context", "%s is a file; name the folder holding the Dockerfile", b.Context)
	}
}

// hostPorts reports a fixed host port that two services publish: the
// second could never start while the first runs.
func (v *validator) hostPorts() {
	type use struct{ service, field string }
	seen := map[string]use{}
	for _, name := range slices.Sorted(maps.Keys(v.c.Services)) {
		s := v.c.Services[name]
		if s == nil {
			continue
		}
		for i, raw := range s.Ports {
			p, err := services.ParsePort(raw)
			if err != nil || p.Host == 0 {
				continue
			}
			key := strconv.Itoa(p.Host) + "/" + p.Protocol
			f := fmt.Sprintf("services.%s.ports[%d]", name, i)
			if first, dup := seen[key]; dup {
				where := "also"
				if first.service == name {
					where = "twice"
				}
				v.errorf(f, "host port %s is %s published by service %s (%s); two containers cannot bind one port: change one of them, or write %q to let skillgate choose",
					key, where, first.service, v.c.where(first.field), strconv.Itoa(p.Container))
				continue
			}
			seen[key] = use{name, f}
		}
	}
}

func (v *validator) envNames(field string, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !envNameRe().MatchString(k) {
			v.errorf(field, "%q is not a variable name; use letters, digits and _, not starting with a digit", k)
		}
	}
}

// docker checks the docker: section and the services' dependency graph.
func (v *validator) docker() {
	d := v.c.Docker
	if d.Project != "" && !services.ValidProject(d.Project) {
		v.errorf("docker.project", "%q must be 1-40 lower-case letters, digits, _ or -, starting with a letter or digit", d.Project)
	}
	for i, p := range d.AllowBinds {
		abs := v.c.resolvePath(p)
		switch {
		case p == "":
			v.errorf(fmt.Sprintf("docker.allow_binds[%d]", i), "empty folder; remove the entry")
		case services.IsDockerSocket(abs):
			v.errorf(fmt.Sprintf("docker.allow_binds[%d]", i), "%s holds the Docker socket; allow a narrower folder", abs)
		}
	}
	if d.StartTimeout < 0 {
		v.errorf("docker.start_timeout", "%s is negative; use a positive duration such as 2m", d.StartTimeout)
	}
	if d.HealthTTL < 0 {
		v.errorf("docker.health_ttl", "%s is negative; use a positive duration such as 2s", d.HealthTTL)
	}
	v.hostPorts()
	if cyc := serviceCycle(v.c.Services); cyc != nil {
		v.errorf("services."+cyc[0]+".depends_on", "services depend on each other in a cycle: %s; remove one of these dependencies", strings.Join(cyc, " -> "))
	}
}

// serverImage checks the container settings of a server with image:.
func (v *validator) serverImage(f string, s *Server) {
	if s.Privileged {
		v.errorf(f+".privileged", "privileged containers are never allowed; remove it")
	}
	if s.Image == "" {
		for key, set := range map[string]bool{"network": s.Network != "", "cpus": s.CPUs != 0, "memory": s.Memory != 0, "pids": s.PIDs != 0} {
			if set {
				v.errorf(f+"."+key, "%s is for image servers only; remove it or set image:", key)
			}
		}
		return
	}
	if !services.ValidImage(s.Image) {
		v.errorf(f+".image", "%q is not an image reference; write it as name:tag", s.Image)
	}
	if s.Cwd != "" {
		v.errorf(f+".cwd", "cwd is for command servers; an image server runs in its image's working folder")
	}
	if len(s.Requires) > 0 {
		if s.Network != "" {
			v.errorf(f+".network", "requires puts the server on the project's network, where it reaches its services by name; remove network:")
		}
		for _, r := range s.Requires {
			if sv := v.c.Services[r]; sv != nil && sv.Network != "" {
				v.errorf(f+".requires", "service %s is on network %s: an image server reaches only services on the project's network; remove its network: or run the server with command:", r, sv.Network)
			}
		}
	}
	switch s.Network {
	case "", "none", "bridge":
	case "host":
		v.errorf(f+".network", "host networking is never allowed; use bridge, or leave it out for none")
	default:
		v.errorf(f+".network", "unknown value %q; use none (the default) or bridge", s.Network)
	}
	v.limitsNotNegative(f, s.CPUs, s.Memory, s.PIDs)
	v.envNames(f+".env", s.Env)
}

// serviceCycle returns the services of one depends_on cycle, or nil.
// Unknown services and a service naming itself are reported on their own.
func serviceCycle(svcs map[string]*Service) []string {
	return graph.Cycle(slices.Sorted(maps.Keys(svcs)), func(n string) []string {
		var deps []string
		if s := svcs[n]; s != nil {
			for _, d := range slices.Sorted(maps.Keys(s.DependsOn)) {
				if svcs[d] != nil && d != n {
					deps = append(deps, d)
				}
			}
		}
		return deps
	})
}
