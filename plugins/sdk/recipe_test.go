package sdk_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exampleDir is the example executor, which third parties copy.
const exampleDir = "../../examples/executor-hello"

// TestReleasedSDKRecipe follows the example's README literally: a copy of
// the example is switched from this repository's SDK to a released one, as
// an author outside the repository does. The release is this very SDK,
// served as the README's version by a module proxy in a folder.
func TestReleasedSDKRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module graph of its own")
	}
	readme, err := os.ReadFile(filepath.Join(exampleDir, "README.md"))
	if err != nil {
		t.Skipf("no example executor next to this SDK: %v", err)
	}
	cmds := recipe(t, string(readme))
	m := regexp.MustCompile(`plugins/sdk@(v\d+\.\d+\.\d+)`).FindStringSubmatch(strings.Join(cmds, "\n"))
	if m == nil {
		t.Fatalf("the recipe pins no SDK version:\n%s", strings.Join(cmds, "\n"))
	}
	version := m[1]

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	serveSDK(t, proxy, version)
	work := filepath.Join(tmp, "executor")
	copyTree(t, exampleDir, work)

	goEnv := func(key string) string {
		out, err := exec.Command("go", "env", key).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", key, err)
		}
		return strings.TrimSpace(string(out))
	}
	// Modules other than the SDK come from this machine's module cache,
	// or the usual proxy; the cache the recipe fills is a fresh one.
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(goEnv("GOMODCACHE"), "cache", "download"))+","+goEnv("GOPROXY"),
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOFLAGS=-modcacherw", "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=", "GOWORK=off", "GOTOOLCHAIN=local",
	)
	run := func(line string) {
		t.Helper()
		args := strings.Fields(line)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	for _, line := range cmds {
		run(line)
	}
	// Every package, tests included, resolves (building them would only
	// recompile gRPC under the new cache's paths).
	run("go list -deps -test ./...")

	mod, err := os.ReadFile(filepath.Join(work, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(mod, []byte("replace")) || !bytes.Contains(mod, []byte("github.com/skillgate/skillgate/plugins/sdk "+version)) {
		t.Errorf("go.mod after the recipe:\n%s", mod)
	}
}

// TestSDKFromACopyRecipe follows the example's README for an author who
// builds against a copy of the repository today, before any release: a
// copy of the example, outside the repository, is pointed at this SDK
// folder and built.
func TestSDKFromACopyRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	readme, err := os.ReadFile(filepath.Join(exampleDir, "README.md"))
	if err != nil {
		t.Skipf("no example executor next to this SDK: %v", err)
	}
	cmds := recipeIn(t, string(readme), "## Depending on the SDK from your own module")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "executor")
	copyTree(t, exampleDir, work)
	// Modules other than the SDK come from the module cache or, on a fresh
	// machine, from the configured proxy: `go mod tidy` wants the go.sum
	// lines of modules no build of this repository downloads (fatih/color's
	// go-colorable, for one), so the cache alone is not enough.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	for _, line := range cmds {
		line = strings.ReplaceAll(line, "/path/to/skillgate", filepath.ToSlash(repo))
		args := strings.Fields(line)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	mod, err := os.ReadFile(filepath.Join(work, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(mod, []byte("github.com/skillgate/skillgate/plugins/sdk v0.0.0")) ||
		!bytes.Contains(mod, []byte("=> "+filepath.ToSlash(repo)+"/plugins/sdk")) {
		t.Errorf("go.mod after the recipe:\n%s", mod)
	}
}

// recipe returns the commands of the README's "Depending on a released
// SDK" section, one per line.
func recipe(t *testing.T, readme string) []string {
	t.Helper()
	return recipeIn(t, readme, "## Depending on a released SDK")
}

// recipeIn returns the commands of the first sh block of the README's
// section under heading, one per line.
func recipeIn(t *testing.T, readme, heading string) []string {
	t.Helper()
	_, section, ok := strings.Cut(readme, heading)
	if !ok {
		t.Fatalf("the README has no %q section", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal("the section has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// serveSDK lays this module out in dir as a module proxy serves it, at
// version.
func serveSDK(t *testing.T, dir, version string) {
	t.Helper()
	const path = "github.com/skillgate/skillgate/plugins/sdk"
	at := filepath.Join(dir, filepath.FromSlash(path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		w, err := zw.Create(path + "@" + version + "/" + filepath.ToSlash(p))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		version + ".mod":  mod,
		version + ".zip":  zb.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// copyTree copies the regular files under src to dst, but for the binary
// a build of the example leaves there.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular() || rel == "executor-hello":
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
