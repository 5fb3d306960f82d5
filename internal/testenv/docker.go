package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const dockerHint = "run ./scripts/test-deps.sh: it installs docker.io and starts dockerd"

// Docker skips (or, under CI, fails) the test unless a Docker engine
// answers, and returns the path of the docker CLI. The engine is checked
// with the CLI, so this package stays free of the Docker client.
func Docker(t testing.TB) string {
	t.Helper()
	cli, err := exec.LookPath("docker")
	Require(t, "the docker CLI", err == nil, dockerHint)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, "version", "--format", "{{.Server.APIVersion}}").CombinedOutput()
	Require(t, "a Docker engine ("+strings.TrimSpace(string(out))+")", err == nil, dockerHint)
	return cli
}

// DockerCLI runs the docker CLI with args and returns its trimmed stdout,
// failing the test on an error.
func DockerCLI(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(stdout.String())
}

// StaticImage builds the Go main package in dir (a path inside the
// repository, such as "services/testdata/kv") as a static binary named
// after the folder, and an image tagged tag from the Dockerfile next to it
// (FROM scratch, COPY <name>). It returns a context folder holding both,
// for tests that build through other means. Unchanged inputs hit the
// engine's build cache, so a rebuild takes well under a second.
func StaticImage(t testing.TB, dir, tag string) string {
	t.Helper()
	Docker(t)
	src := filepath.Join(RepoRoot(t), dir)
	name := filepath.Base(src)
	ctxDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(ctxDir, name), ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", dir, err, out)
	}
	df, err := os.ReadFile(filepath.Join(src, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644); err != nil {
		t.Fatal(err)
	}
	if tag != "" {
		DockerCLI(t, "build", "-q", "-t", tag, ctxDir)
	}
	return ctxDir
}

// Containers returns the names of the containers (running or not) that
// pass every filter, written as for docker ps --filter: label=key=value,
// status=running, name=...
func Containers(t testing.TB, filters ...string) []string {
	t.Helper()
	args := []string{"ps", "-a", "--format", "{{.Names}}"}
	for _, f := range filters {
		args = append(args, "--filter", f)
	}
	out := DockerCLI(t, args...)
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// WaitNoContainers fails the test unless no container passing the filters
// (see Containers) is left within timeout.
func WaitNoContainers(t testing.TB, timeout time.Duration, filters ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := Containers(t, filters...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("containers left behind (%v): %v", filters, left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// UniqueProject returns a services project name unique to this test
// process and prefix, so parallel test runs never share containers.
func UniqueProject(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)
}
