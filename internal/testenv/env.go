package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Environment variables scripts/test.sh exports for the tests.
const (
	// EnvNPMDir is the absolute path of test/npm/node_modules.
	EnvNPMDir = "SKILLGATE_NPM_DIR"
	// EnvConformanceServer is the absolute path of mcp-go's conformance server binary.
	EnvConformanceServer = "SKILLGATE_CONFORMANCE_SERVER"
	// EnvNode22 is the absolute path of a Node 22 binary.
	EnvNode22 = "SKILLGATE_NODE22"
)

// module is the root module's path; RepoRoot looks for its go.mod.
const module = "github.com/skillgate/skillgate"

// installHint is what to do when a component is missing.
const installHint = "run ./scripts/test-deps.sh (or ./scripts/test.sh, which runs it)"

// InCI reports whether the tests run under CI (the CI variable is set and not
// "false" or "0"). Under CI a missing component is a failure, not a skip.
func InCI() bool {
	v := strings.TrimSpace(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// Require stops the test when ok is false: it skips with a message naming what
// is missing and how to get it (hint) when CI is unset, and fails when CI is
// set, because CI installs every component.
func Require(t testing.TB, what string, ok bool, hint string) {
	t.Helper()
	if ok {
		return
	}
	msg := what + " is not available"
	if hint != "" {
		msg += ": " + hint
	}
	if InCI() {
		t.Fatalf("%s (CI is set, so a missing component is a failure)", msg)
	} else {
		t.Skipf("%s (skipping because CI is unset)", msg)
	}
}

// RepoRoot returns the root of the skillgate repository: the nearest directory
// at or above the working directory whose go.mod declares the root module.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(data, module) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("find repository root: no go.mod for %s at or above %s", module, wd)
		}
	}
}

func declaresModule(gomod []byte, path string) bool {
	for line := range bytes.Lines(gomod) {
		f := strings.Fields(string(line))
		if len(f) >= 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}

// NPMDir returns the node_modules directory holding the pinned npm packages
// (test/npm/node_modules): EnvNPMDir when set, else the one in the repository.
func NPMDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvNPMDir)
	if dir == "" {
		root, err := repoRoot()
		Require(t, "the repository's test/npm", err == nil, fmt.Sprint(err))
		dir = filepath.Join(root, "test", "npm", "node_modules")
	}
	Require(t, "npm test packages ("+dir+")", isDir(dir), installHint)
	return dir
}

// Node22 returns the path of the Node 22 binary the npm "node" package ships
// (the conformance suite and the Inspector need Node 22): EnvNode22 when set,
// else node_modules/node/bin/node in NPMDir.
func Node22(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(EnvNode22)
	if bin == "" {
		bin = filepath.Join(NPMDir(t), "node", "bin", "node")
	}
	Require(t, "Node 22 ("+bin+")", isExecutable(bin), installHint)
	return bin
}

// serverArgs are the arguments a reference server needs to speak MCP over
// stdio, beyond its entry point.
var serverArgs = map[string][]string{
	"@modelcontextprotocol/server-everything": {"stdio"},
}

// NodeServer returns the argv that starts a reference MCP server from npm over
// stdio: Node 22, the package's entry point, and the arguments it needs for
// stdio. pkg is a package in test/npm/package.json, with or without the
// @modelcontextprotocol/ scope ("server-everything"). Append what the server
// takes: server-filesystem needs its allowed directories, server-memory reads
// MEMORY_FILE_PATH from its environment.
func NodeServer(t testing.TB, pkg string) []string {
	t.Helper()
	if !strings.HasPrefix(pkg, "@") {
		pkg = "@modelcontextprotocol/" + pkg
	}
	dir := filepath.Join(NPMDir(t), filepath.FromSlash(pkg))
	entry, err := entryPoint(dir)
	Require(t, "npm package "+pkg, err == nil, fmt.Sprintf("%v; %s", err, installHint))
	argv := []string{Node22(t), entry}
	return append(argv, serverArgs[pkg]...)
}

// entryPoint returns the absolute path of the executable a package's bin field
// names (its only one, or else the first by name), falling back to main.
func entryPoint(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("read package.json: %w", err)
	}
	var pj struct {
		Bin  json.RawMessage `json:"bin"`
		Main string          `json:"main"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return "", fmt.Errorf("parse %s: %w", filepath.Join(dir, "package.json"), err)
	}
	rel := pj.Main
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(pj.Bin, &one) == nil && one != "":
		rel = one
	case json.Unmarshal(pj.Bin, &many) == nil && len(many) > 0:
		names := make([]string, 0, len(many))
		for name := range many {
			names = append(names, name)
		}
		sort.Strings(names)
		rel = many[names[0]]
	}
	if rel == "" {
		return "", fmt.Errorf("%s names no bin or main", filepath.Join(dir, "package.json"))
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("entry point: %w", err)
	}
	return path, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// RunWithOwnState runs m with XDG_STATE_HOME set to a new temporary
// folder, removed afterwards, unless the environment already sets it: the
// gateway keeps skill state, skill repositories and service locks there,
// and tests that do not set it themselves would otherwise write into the
// home folder of whoever runs them. It returns m.Run's exit code.
func RunWithOwnState(m *testing.M) int {
	if os.Getenv("XDG_STATE_HOME") != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "skillgate-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv: a state folder for the tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("XDG_STATE_HOME", dir); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	return m.Run()
}
