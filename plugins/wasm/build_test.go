package wasm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

func TestBuildGo(t *testing.T) {
	t.Run("compile error carries the compiler's output", func(t *testing.T) {
		src := t.TempDir()
		writeFile(t, filepath.Join(src, "main.go"), "package main\n\nfunc main() {\n\tundefinedThing()\n}\n")
		out := filepath.Join(t.TempDir(), "x.wasm")
		err := BuildGo(t.Context(), src, out, StyleCommand)
		var be *BuildError
		if !errors.As(err, &be) || !errors.Is(err, ErrBuild) || be.Lang != "go" || !strings.Contains(be.Output, "main.go:4:2: undefined: undefinedThing") {
			t.Fatalf("BuildGo = %v", err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("a failed build left an output")
		}
		if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*tmp")); len(m) > 0 {
			t.Errorf("a failed build left temporary files: %v", m)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		src := t.TempDir()
		for _, tc := range []struct{ src, out, style, want string }{
			{src, filepath.Join(src, "x.wasm"), "daemon", `style "daemon"`},
			{src, filepath.Join(src, "x.exe"), StyleCommand, "must be a .wasm path"},
			{filepath.Join(src, "missing"), filepath.Join(src, "x.wasm"), StyleCommand, "source folder"},
			{src, filepath.Join(src, "missing", "x.wasm"), StyleCommand, "output folder"},
			{src, filepath.Join(src, "x.wasm"), StyleCommand, "has no .go files"},
		} {
			if err := BuildGo(t.Context(), tc.src, tc.out, tc.style); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("BuildGo(%s, %s, %s) = %v, want %q", tc.src, tc.out, tc.style, err, tc.want)
			}
		}
	})
	t.Run("timeout kills the compiler", func(t *testing.T) {
		// A cold build cache makes the build take seconds.
		t.Setenv("GOCACHE", t.TempDir())
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		before := testenv.ChildPIDs()
		err := BuildGo(ctx, "testdata/command", filepath.Join(t.TempDir(), "x.wasm"), StyleCommand)
		var be *BuildError
		if !errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish in time") {
			t.Fatalf("BuildGo = %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(testenv.ChildPIDs()) > len(before) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if left := testenv.ChildPIDs(); len(left) > len(before) {
			t.Errorf("processes left behind: %v (before: %v)", left, before)
		}
	})
	t.Run("no toolchain", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		err := BuildGo(t.Context(), "testdata/command", filepath.Join(t.TempDir(), "x.wasm"), StyleCommand)
		if !errors.Is(err, ErrToolchain) || !strings.Contains(err.Error(), "go is not on PATH") {
			t.Fatalf("BuildGo = %v", err)
		}
	})
}

func TestBuildEnv(t *testing.T) {
	t.Setenv("SKILLGATE_TOKEN", "s3cret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cret")
	env := cleanEnv()
	for _, kv := range env {
		if strings.Contains(kv, "s3cret") {
			t.Errorf("build environment holds %s", kv)
		}
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("build environment lacks PATH: %v", env)
	}
}

func TestBuildRust(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rust.wasm")
	if _, err := RustAvailable(t.Context()); err != nil {
		// What these machines have: no Rust wasm32-wasip1 target.
		if !errors.Is(err, ErrToolchain) || !strings.Contains(err.Error(), RustTarget) {
			t.Fatalf("RustAvailable = %v, want ErrToolchain naming %s", err, RustTarget)
		}
		err := BuildRust(t.Context(), "testdata/rust", out, StyleCommand)
		if !errors.Is(err, ErrToolchain) || !strings.Contains(err.Error(), RustTarget) {
			t.Fatalf("BuildRust = %v, want ErrToolchain naming %s", err, RustTarget)
		}
		if _, err := exec.LookPath("cargo"); err != nil {
			t.Skipf("Rust with the %s target is not installed; checked the error only", RustTarget)
		}
		t.Skipf("Rust is installed without the %s target (rustup target add %s); checked the error only", RustTarget, RustTarget)
	}
	if err := BuildRust(t.Context(), "testdata/rust", out, StyleCommand); err != nil {
		t.Fatal(err)
	}
	c, _ := startExec(t)
	spec := toolFolder(t, StyleCommand, nil)
	copyFile(t, out, filepath.Join(toolDir(t, spec), "module.wasm"))
	load(t, c, "rust", spec)
	r, _ := call(t, c, "rust", `{"text":"hi"}`)
	if r.IsError || r.StructuredContent["echo"] != `{"text":"hi"}` {
		t.Fatalf("result = %+v", r)
	}
}
