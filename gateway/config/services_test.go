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
	if len(pg.Ports) != 3 || pg.Ports[1] != (services.Port{Container: 6379, Host: 16379, Protocol: "tcp"}) || pg.Ports[2].Protocol != "udp" {
		t.Errorf("pg ports = %+v", pg.Ports)
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
