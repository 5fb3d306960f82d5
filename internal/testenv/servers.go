package testenv

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// conformancePkg is mcp-go's fixture server for the MCP conformance suite.
const conformancePkg = "github.com/mark3labs/mcp-go/examples/conformance"

// startTimeout bounds how long a server may take to start listening.
const startTimeout = 30 * time.Second

// startAttempts is how often a server is started on a new port when the one
// FreePort gave was taken in between.
const startAttempts = 3

var buildMu sync.Mutex

// ConformanceServerBinary returns the path of mcp-go's conformance server:
// EnvConformanceServer when set, else .cache/bin/conformance-server in the
// repository, which it builds (from the repository root, so at the mcp-go
// version go.mod requires) when missing.
func ConformanceServerBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(EnvConformanceServer); bin != "" {
		Require(t, "mcp-go conformance server ("+bin+")", isExecutable(bin), installHint)
		return bin
	}
	root, err := repoRoot()
	Require(t, "the repository root", err == nil, fmt.Sprint(err))
	bin := filepath.Join(root, ".cache", "bin", "conformance-server")
	buildMu.Lock()
	defer buildMu.Unlock()
	if isExecutable(bin) {
		return bin
	}
	_, err = exec.LookPath("go")
	Require(t, "the go command (to build the conformance server)", err == nil, "put Go 1.26 on PATH")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatalf("build conformance server: %v", err)
	}
	// Build beside the target and rename, so that test binaries building at
	// the same time never see a half-written file.
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, conformancePkg)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	Require(t, "mcp-go conformance server", err == nil,
		fmt.Sprintf("go build %s: %v\n%s\n%s", conformancePkg, err, out, installHint))
	if err := os.Rename(tmp, bin); err != nil {
		os.Remove(tmp)
		t.Fatalf("build conformance server: %v", err)
	}
	return bin
}

// ConformanceServer starts mcp-go's conformance server (the fixture tools,
// resources and prompts the conformance suite expects: test_simple_text, ...)
// on a free 127.0.0.1 port and returns its streamable HTTP endpoint,
// "http://127.0.0.1:PORT/mcp". The server speaks both protocol eras. It is
// stopped in t.Cleanup.
func ConformanceServer(t testing.TB) string {
	t.Helper()
	bin := ConformanceServerBinary(t)
	return startHTTPServer(t, "conformance server", func(port int) (*exec.Cmd, func(*Process, string) error) {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "CONFORMANCE_ADDR="+addr)
		return cmd, func(p *Process, addr string) error {
			if err := p.WaitTCP(addr, startTimeout); err != nil {
				return err
			}
			// Make sure the port is ours and not another program's.
			client := &http.Client{Timeout: 5 * time.Second}
			resp, err := client.Get("http://" + addr + "/health")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET /health: %s", resp.Status)
			}
			return nil
		}
	})
}

// EverythingHTTP starts the reference server-everything in streamable HTTP
// mode on a free port and returns its endpoint, "http://127.0.0.1:PORT/mcp".
// It listens on all interfaces (the server offers no way to choose); tests
// talk to it on 127.0.0.1 only. It speaks the legacy protocol era only. It is
// stopped in t.Cleanup.
func EverythingHTTP(t testing.TB) string {
	t.Helper()
	argv := NodeServer(t, "server-everything")
	return startHTTPServer(t, "server-everything", func(port int) (*exec.Cmd, func(*Process, string) error) {
		cmd := exec.Command(argv[0], argv[1], "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		return cmd, func(p *Process, _ string) error {
			// Printed from the listen callback; a taken port prints "Failed to start" and exits.
			return p.WaitOutput("listening on port "+strconv.Itoa(port), startTimeout)
		}
	})
}

// startHTTPServer starts the command newCmd builds for a free port and waits
// with the returned ready function, trying again on a new port if that fails.
func startHTTPServer(t testing.TB, what string, newCmd func(port int) (*exec.Cmd, func(*Process, string) error)) string {
	t.Helper()
	var lastErr error
	for range startAttempts {
		port := FreePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd, ready := newCmd(port)
		p := Start(t, cmd)
		if lastErr = ready(p, addr); lastErr == nil {
			return "http://" + addr + "/mcp"
		}
		t.Logf("start %s on %s: %v\n%s", what, addr, lastErr, tail(p.Output(), 4<<10))
		p.Stop()
	}
	t.Fatalf("start %s: %v (after %d attempts)", what, lastErr, startAttempts)
	return ""
}
