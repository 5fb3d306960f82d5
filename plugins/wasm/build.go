package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultBuildTimeout bounds a build when the context has no deadline.
const DefaultBuildTimeout = 5 * time.Minute

// maxBuildOutput is how much compiler output a BuildError keeps (the tail).
const maxBuildOutput = 16 << 10

// buildEnv are the variables a build keeps from the executor's environment:
// where the toolchains and their caches are, and how to reach a module
// proxy. Everything else (secrets included) stays out of the compiler's
// environment.
var buildEnv = []string{
	"PATH", "HOME", "TMPDIR", "LANG",
	"GOCACHE", "GOPATH", "GOMODCACHE", "GOROOT", "GOPROXY", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOSUMDB", "GOENV",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
}

func cleanEnv(extra ...string) []string {
	var env []string
	for _, k := range buildEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// BuildGo compiles the Go main package in srcDir to a wasip1 module at
// outPath with the local Go toolchain: GOOS=wasip1 GOARCH=wasm, and
// -buildmode=c-shared for StyleReactor (the package's exported functions
// are marked //go:wasmexport). A folder with a go.mod is built as its
// module; one without is built from its .go files, which may then import
// the standard library only.
//
// The compiler runs with a clean environment (PATH, HOME, the Go caches
// and proxy settings; no secrets), GOTOOLCHAIN=local, CGO_ENABLED=0,
// GOWORK=off, and -trimpath. The build is bounded by ctx, or
// DefaultBuildTimeout when ctx has no deadline. outPath is replaced
// atomically, so a running executor never reads a half-written module.
// A missing go is ErrToolchain; a failed compile is a *BuildError wrapping
// ErrBuild with the compiler's output.
func BuildGo(ctx context.Context, srcDir, outPath, style string) error {
	if style == "" {
		style = StyleCommand
	}
	if style != StyleCommand && style != StyleReactor {
		return fmt.Errorf("build go: style %q is not command or reactor", style)
	}
	src, out, err := buildPaths(srcDir, outPath)
	if err != nil {
		return fmt.Errorf("build go: %w", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return &BuildError{Lang: "go", Dir: src, Err: fmt.Errorf("%w: go is not on PATH; install Go 1.24 or newer", ErrToolchain)}
	}
	args := []string{"build", "-trimpath", "-buildvcs=false"}
	if style == StyleReactor {
		args = append(args, "-buildmode=c-shared")
	}
	tmp, err := tempOut(out)
	if err != nil {
		return fmt.Errorf("build go: %w", err)
	}
	defer os.Remove(tmp)
	args = append(args, "-o", tmp)
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
		args = append(args, ".")
	} else {
		files, err := goFiles(src)
		if err != nil {
			return fmt.Errorf("build go: %w", err)
		}
		args = append(args, files...)
	}
	env := cleanEnv("GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=")
	if err := runBuild(ctx, "go", src, env, goBin, args...); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// goFiles lists the folder's non-test .go files.
func goFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			files = append(files, n)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no .go files", dir)
	}
	return files, nil
}

// RustTarget is the Rust target BuildRust compiles for.
const RustTarget = "wasm32-wasip1"

// BuildRust compiles the Cargo package in srcDir to a wasip1 module at
// outPath: cargo build --release --target wasm32-wasip1. A reactor's
// Cargo.toml must declare crate-type = ["cdylib"] and export its function
// with #[no_mangle] pub extern "C". When cargo is missing or the installed
// Rust lacks the wasm32-wasip1 target (rustup target add wasm32-wasip1), it
// returns ErrToolchain without building. The environment, timeout and
// atomic replacement are as for BuildGo.
func BuildRust(ctx context.Context, srcDir, outPath, style string) error {
	if style == "" {
		style = StyleCommand
	}
	if style != StyleCommand && style != StyleReactor {
		return fmt.Errorf("build rust: style %q is not command or reactor", style)
	}
	src, out, err := buildPaths(srcDir, outPath)
	if err != nil {
		return fmt.Errorf("build rust: %w", err)
	}
	if _, err := os.Stat(filepath.Join(src, "Cargo.toml")); err != nil {
		return fmt.Errorf("build rust: %s has no Cargo.toml", src)
	}
	cargo, err := RustAvailable(ctx)
	if err != nil {
		return &BuildError{Lang: "rust", Dir: src, Err: err}
	}
	target, err := os.MkdirTemp("", "skillgate-cargo-*")
	if err != nil {
		return fmt.Errorf("build rust: %w", err)
	}
	defer os.RemoveAll(target)
	env := cleanEnv("CARGO_TARGET_DIR=" + target)
	if err := runBuild(ctx, "rust", src, env, cargo, "build", "--release", "--target", RustTarget); err != nil {
		return err
	}
	built, err := filepath.Glob(filepath.Join(target, RustTarget, "release", "*.wasm"))
	if err != nil || len(built) != 1 {
		return &BuildError{Lang: "rust", Dir: src, Err: fmt.Errorf("%w: expected one .wasm in the build output, found %d (is it a binary crate, or a cdylib for a reactor?)", ErrBuild, len(built))}
	}
	bin, err := os.ReadFile(built[0])
	if err != nil {
		return fmt.Errorf("build rust: %w", err)
	}
	tmp, err := tempOut(out)
	if err != nil {
		return fmt.Errorf("build rust: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.WriteFile(tmp, bin, 0o644); err != nil {
		return fmt.Errorf("build rust: %w", err)
	}
	return os.Rename(tmp, out)
}

// RustAvailable returns the path of cargo when cargo and rustc are on PATH
// and the Rust toolchain has the wasm32-wasip1 target installed; otherwise
// an error wrapping ErrToolchain that says what to install.
func RustAvailable(ctx context.Context) (cargo string, err error) {
	cargo, err = exec.LookPath("cargo")
	if err != nil {
		return "", fmt.Errorf("%w: cargo is not on PATH; install Rust (https://rustup.rs) and run rustup target add %s", ErrToolchain, RustTarget)
	}
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		return "", fmt.Errorf("%w: rustc is not on PATH; install Rust (https://rustup.rs) and run rustup target add %s", ErrToolchain, RustTarget)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The target list names every target rustc knows; only the sysroot
	// says whether its standard library is installed.
	known, err := exec.CommandContext(ctx, rustc, "--print", "target-list").Output()
	if err != nil {
		return "", fmt.Errorf("%w: rustc --print target-list: %v", ErrToolchain, err)
	}
	if !containsLine(known, RustTarget) {
		return "", fmt.Errorf("%w: this rustc does not know the %s target (Rust 1.78 or newer has it); update Rust", ErrToolchain, RustTarget)
	}
	sysroot, err := exec.CommandContext(ctx, rustc, "--print", "sysroot").Output()
	if err != nil {
		return "", fmt.Errorf("%w: rustc --print sysroot: %v", ErrToolchain, err)
	}
	lib := filepath.Join(strings.TrimSpace(string(sysroot)), "lib", "rustlib", RustTarget)
	if _, err := os.Stat(lib); err != nil {
		return "", fmt.Errorf("%w: the Rust target %s is not installed; run rustup target add %s", ErrToolchain, RustTarget, RustTarget)
	}
	return cargo, nil
}

func containsLine(b []byte, s string) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		if string(bytes.TrimSpace(l)) == s {
			return true
		}
	}
	return false
}

// buildPaths checks the source folder and the output's folder and makes
// both absolute.
func buildPaths(srcDir, outPath string) (src, out string, err error) {
	src, err = filepath.Abs(srcDir)
	if err != nil {
		return "", "", err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return "", "", fmt.Errorf("source folder: %w", err)
	}
	if !fi.IsDir() {
		return "", "", fmt.Errorf("source %s is not a folder", src)
	}
	if outPath == "" || !strings.HasSuffix(outPath, ".wasm") {
		return "", "", fmt.Errorf("output %q must be a .wasm path", outPath)
	}
	out, err = filepath.Abs(outPath)
	if err != nil {
		return "", "", err
	}
	if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("output folder %s does not exist", filepath.Dir(out))
	}
	return src, out, nil
}

// tempOut reserves a temporary file next to out, so the final rename stays
// on one file system.
func tempOut(out string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return "", err
	}
	name := f.Name()
	return name, f.Close()
}

// runBuild runs a compiler in its own process group, killed as a group when
// ctx is done or the build outlives DefaultBuildTimeout.
func runBuild(ctx context.Context, lang, dir string, env []string, bin string, args ...string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultBuildTimeout)
		defer cancel()
	}
	var output tailBuffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = &output
	cmd.Stderr = &output
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	cause := fmt.Errorf("%w: %s %s: %v", ErrBuild, filepath.Base(bin), strings.Join(args, " "), err)
	if ctx.Err() != nil {
		cause = fmt.Errorf("%s %s stopped: %w", filepath.Base(bin), args[0], ctx.Err())
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cause = fmt.Errorf("%s %s did not finish in time: %w", filepath.Base(bin), args[0], ctx.Err())
		}
	}
	return &BuildError{Lang: lang, Dir: dir, Output: strings.TrimSpace(output.String()), Err: cause}
}

// tailBuffer keeps the last maxBuildOutput bytes written to it.
type tailBuffer struct {
	b   []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*maxBuildOutput {
		t.b = append(t.b[:0], t.b[len(t.b)-maxBuildOutput:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b
	if len(b) > maxBuildOutput {
		b, t.cut = b[len(b)-maxBuildOutput:], true
	}
	if t.cut {
		return "...\n" + string(b)
	}
	return string(b)
}
