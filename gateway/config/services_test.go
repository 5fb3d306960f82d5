package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/services"
)

func TestServiceSpecs(t *testing.T) {
	c, err := Load("testdata/valid/services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs := c.ServiceSpecs()
	if len(specs) != 2 || specs[0].Name != "kv" || specs[1].Name != "pg" {
		t.Fatalf("specs = %+v", specs)
	}
	kv, pg := specs[0], specs[1]
	dir, _ := filepath.Abs("testdata/valid")
	if kv.Build == nil || kv.Build.Context != filepath.Join(dir, "kv") || kv.Build.Dockerfile != "Dockerfile.kv" || !kv.Manual ||
		kv.DependsOn["pg"] != services.ConditionHealthy || kv.Network != "bridge" || kv.StartTimeout != 30*time.Second {
		t.Errorf("kv = %+v", kv)
	}
	if len(pg.Ports) != 3 || pg.Ports[1] != (services.Port{Container: 6379, Host: 16379, Protocol: "tcp", Origin: "testdata/valid/services.yaml:10:21"}) || pg.Ports[2].Protocol != "udp" {
		t.Errorf("pg ports = %#v", pg.Ports)
	}
	want := []services.Volume{
		{Source: "pgdata", Target: "/var/lib/postgresql/data"},
		{Source: filepath.Join(dir, "data/init"), Target: "/docker-entrypoint-initdb.d", Bind: true, ReadOnly: true},
		{Source: filepath.Join(dir, "data/out"), Target: "/out", Bind: true},
	}
	for i, v := range want {
		if i >= len(pg.Volumes) || pg.Volumes[i] != v {
			t.Errorf("pg volume %d = %+v, want %+v", i, pg.Volumes, v)
		}
	}
	if pg.CPUs != 1.5 || pg.Memory != 512<<20 || pg.PIDs != 200 || !pg.Keep || pg.Restart != "on-failure:3" ||
		pg.Healthcheck == nil || pg.Healthcheck.Interval != 500*time.Millisecond || pg.Healthcheck.Retries != 5 {
		t.Errorf("pg = %+v", pg)
	}
	// The manager accepts what validation accepted.
	if _, err := services.New(specs, services.Options{Project: c.DockerProject(), AllowBinds: c.AllowedBinds()}); err != nil {
		t.Errorf("services.New: %v", err)
	}
	if c.DockerProject() != "shop" {
		t.Errorf("project %q", c.DockerProject())
	}
	sc := c.ServerContainer("fs")
	if sc == nil || sc.Image != "mcp/filesystem:1" || sc.Network != "bridge" || sc.CPUs != 0.5 || sc.PIDs != 64 || strings.Join(sc.EnvNames, ",") != "TOKEN" {
		t.Fatalf("server container = %+v", sc)
	}
	if err := sc.Check(); err != nil {
		t.Error(err)
	}
	if _, args := sc.Command(); strings.Contains(strings.Join(args, " "), "TOKEN=") {
		t.Errorf("an env value is on the command line: %v", args)
	}
	if c.Servers["fs"].Kind() != "stdio" {
		t.Errorf("an image server's kind is %q", c.Servers["fs"].Kind())
	}
}

// TestDependsOnShortForm: compose's list form of depends_on is read, each
// name with compose's condition for it, service_started.
func TestDependsOnShortForm(t *testing.T) {
	c, err := Parse(strings.NewReader("services:\n  a: {image: a:1}\n  b: {image: b:1}\n  c: {image: c:1, depends_on: [a, b]}\n"), "s.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range c.ServiceSpecs() {
		if sp.Name == "c" && (len(sp.DependsOn) != 2 || sp.DependsOn["a"] != services.ConditionStarted || sp.DependsOn["b"] != services.ConditionStarted) {
			t.Errorf("c depends on %v", sp.DependsOn)
		}
	}
	if _, err := Parse(strings.NewReader("services:\n  c: {image: c:1, depends_on: [[a]]}\n"), "s.yaml", nil); err == nil || !strings.Contains(err.Error(), "services.c.depends_on[0]: want a service name") {
		t.Errorf("a list in the list: %v", err)
	}
}

// TestDockerProjectSymlink: the default project does not depend on how
// the config file's path is spelled: through a symlinked folder or file
// it is the same.
func TestDockerProjectSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "shop")
	os.MkdirAll(real, 0o755)
	path := filepath.Join(real, "skillgate.yaml")
	os.WriteFile(path, []byte("services: {}\n"), 0o644)
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, filepath.Join(dir, "cfg.yaml")); err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, p := range []string{path, filepath.Join(dir, "link", "skillgate.yaml"), filepath.Join(dir, "cfg.yaml"), filepath.Join(dir, "link", "..", "shop", "skillgate.yaml")} {
		c, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = c.DockerProject()
		}
		if got := c.DockerProject(); got != want {
			t.Errorf("project through %s = %q, want %q", p, got, want)
		}
	}
}

func TestDockerProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "My Shop!")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "skillgate.yaml")
	os.WriteFile(path, []byte("services: {}\n"), 0o644)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := c.DockerProject()
	if !services.ValidProject(p) || !strings.HasPrefix(p, "my-shop-") {
		t.Errorf("project %q", p)
	}
	if again, _ := Load(path); again.DockerProject() != p {
		t.Error("the project is not stable")
	}
	if BuiltinDefault().DockerProject() != "default" {
		t.Error("builtin project")
	}
}
