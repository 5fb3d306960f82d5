package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// These tests run the real binary as a desktop client (Claude Desktop)
// launches it: `skillgate run --stdio`, working folder /, an environment
// with little more than PATH and HOME.

// desktopCmd is bin with args as a desktop client starts it.
func desktopCmd(bin, home string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	return cmd
}

// stdioSession starts cmd, sends initialize and tools/list on its stdin
// and returns tools/list's response (or "" when stdout ended first) with
// everything cmd wrote to stderr by then.
func stdioSession(t *testing.T, cmd *exec.Cmd) (string, *testenv.Process, *testenv.SyncBuffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	p := testenv.Start(t, cmd)
	t.Cleanup(func() { _ = stdin.Close() })
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"desktop-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			return "", p, stderr
		}
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return "", p, stderr
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && string(m.ID) == "2" {
				return l, p, stderr
			}
		case <-deadline:
			t.Fatalf("no tools/list response in 90 s; stderr:\n%s", stderr)
		}
	}
}

// TestDesktopStdioUnsetToken: an auth token whose variable the desktop
// client did not pass keeps `run --stdio` from nothing (auth is HTTP's),
// with one warning; `run` over HTTP refuses it, saying where variables
// come from.
func TestDesktopStdioUnsetToken(t *testing.T) {
	bin := buildSkillgate(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "skillgate.yaml")
	tools := filepath.Join(testenv.RepoRoot(t), "examples", "tools")
	writeFile(t, cfg, fmt.Sprintf("auth: {tokens: [\"${SKILLGATE_DESKTOP_TEST_TOKEN}\"]}\ntools: {dirs: [%q]}\n", tools))
	resp, _, stderr := stdioSession(t, desktopCmd(bin, dir, "run", "--stdio", "-c", cfg))
	if !strings.Contains(resp, `"tools__word_count"`) {
		t.Fatalf("tools/list over stdio = %q, want the tools; stderr:\n%s", resp, stderr)
	}
	if n := strings.Count(stderr.String(), "auth.tokens[0]: undefined variable"); n != 1 {
		t.Errorf("the unset token is told %d times, want one warning; stderr:\n%s", n, stderr)
	}
	out, err := desktopCmd(bin, dir, "run", "-c", cfg, "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "auth.tokens[0]: undefined variable") ||
		!strings.Contains(string(out), "skillgate reads variables from the environment it was started in") {
		t.Errorf("run over HTTP: %v\n%s\nwant an error about the token with the hint on variables", err, out)
	}
}

// TestDesktopConfigPath: a relative -c resolved in / says so and asks for
// an absolute path; -c ~/skillgate.yaml (no shell expands it) is the file
// in the home folder.
func TestDesktopConfigPath(t *testing.T) {
	bin := buildSkillgate(t)
	home := t.TempDir()
	tools := filepath.Join(testenv.RepoRoot(t), "examples", "tools")
	writeFile(t, filepath.Join(home, "skillgate.yaml"), fmt.Sprintf("tools: {dirs: [%q]}\n", tools))
	out, err := desktopCmd(bin, home, "run", "--stdio", "-c", "skillgate.yaml").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "working folder, here /;") || !strings.Contains(string(out), "absolute path") {
		t.Errorf("run -c skillgate.yaml in /: %v\n%s\nwant an error naming / and asking for an absolute path", err, out)
	}
	resp, _, stderr := stdioSession(t, desktopCmd(bin, home, "run", "--stdio", "-c", "~/skillgate.yaml"))
	if !strings.Contains(resp, `"tools__word_count"`) {
		t.Errorf("run -c ~/skillgate.yaml: tools/list = %q; stderr:\n%s", resp, stderr)
	}
}

// TestDesktopBuiltinDefault: the built-in default started in / warns,
// once, that it found none of the bundled examples folders.
func TestDesktopBuiltinDefault(t *testing.T) {
	bin := buildSkillgate(t)
	cmd := desktopCmd(bin, t.TempDir(), "run", "--stdio")
	cmd.Stdin = strings.NewReader("") // the client goes at once
	out, _ := cmd.CombinedOutput()
	if n := strings.Count(string(out), "found no examples/tools, examples/pipelines, examples/skills in the working folder /"); n != 1 ||
		!strings.Contains(string(out), "repository root") {
		t.Errorf("the missing examples are told %d times, want one warning saying what to do:\n%s", n, out)
	}
}

// TestDesktopImportAndNoRecursion: importing a Claude Desktop config
// that lists skillgate itself leaves that entry out, saying so; and a
// config that has it anyway (written by hand) fails that server with a
// clear error instead of launching gateways without end.
func TestDesktopImportAndNoRecursion(t *testing.T) {
	bin := buildSkillgate(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "skillgate.yaml")
	claude := filepath.Join(dir, "claude_desktop_config.json")
	writeFile(t, claude, fmt.Sprintf(`{"mcpServers": {
  "skillgate": {"command": %q, "args": ["run", "--stdio", "-c", %q]},
  "words": {"command": "python3", "args": ["-c", "pass"]}
}}`, bin, cfg))
	cmd := exec.Command(bin, "import", claude)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.Contains(string(out), "skillgate:") || !strings.Contains(string(out), "words:") ||
		!strings.Contains(stderr.String(), "skillgate: the command") || !strings.Contains(stderr.String(), "not imported") {
		t.Fatalf("import: %v\nstdout:\n%s\nstderr:\n%s\nwant the skillgate entry left out, with a warning naming it", err, out, stderr.String())
	}

	writeFile(t, cfg, fmt.Sprintf("servers:\n  me: {command: %q, args: [run, --stdio, -c, %q]}\n", bin, cfg))
	t.Cleanup(func() { killAll(t, bin) }) // without the guard, gateways nest without end
	_, p, stderr2 := stdioSession(t, desktopCmd(bin, dir, "run", "--stdio", "-c", cfg))
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr2.String(), "not starting: this gateway was launched as an MCP server by a skillgate gateway") {
		if time.Now().After(deadline) {
			t.Fatalf("no error for the server that runs the gateway itself in 60 s; %d skillgate run processes; stderr:\n%s",
				len(runProcesses(bin)), stderr2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The gateway, and at most the failing child of the moment.
	if n := len(runProcesses(bin)); n > 2 {
		t.Errorf("%d `skillgate run` processes, want the gateway and at most one failing child", n)
	}
	select {
	case <-p.Done():
		t.Errorf("the gateway ended: %v", p.Err())
	default:
	}
}

// runProcesses returns the pids of the `bin run` processes.
func runProcesses(bin string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		args, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if exe == bin && strings.Contains(string(args), "\x00run\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killAll kills every process of bin (a binary of the test's own temporary
// folder), however deep gateways nested.
func killAll(t *testing.T, bin string) {
	for range 50 {
		pids := runProcesses(bin)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("skillgate run processes left: %v", runProcesses(bin))
}
