//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// The test binary doubles as a stubborn stdio MCP server, a stubborn script
// tool, and their children (go-plugin's helperProcess pattern), chosen by
// envStub.
const (
	envStub    = "SKILLGATE_TEST_STUB"     // "server", "tool", or "child" for what they start
	envPIDFile = "SKILLGATE_TEST_PID_FILE" // where a server or tool writes the pids of its tree
)

func init() {
	switch os.Getenv(envStub) {
	case "server":
		stubbornServer()
	case "tool":
		spawnStubborn()
		for { // a tool that keeps printing does not stall
			fmt.Fprintln(os.Stderr, "working")
			time.Sleep(time.Second)
		}
	case "child":
		signal.Ignore(syscall.SIGTERM)
		select {}
	}
}

// spawnStubborn ignores SIGTERM and starts three children that ignore it
// too: one in this process's group, one in a process group of its own, one
// in a session of its own. It writes "parent self child child child" (pids)
// to envPIDFile.
func spawnStubborn() {
	signal.Ignore(syscall.SIGTERM)
	pids := []int{os.Getppid(), os.Getpid()}
	for _, attr := range []*syscall.SysProcAttr{{}, {Setpgid: true}, {Setsid: true}} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = []string{envStub + "=child"}
		cmd.SysProcAttr = attr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pids = append(pids, cmd.Process.Pid)
	}
	file := os.Getenv(envPIDFile)
	line := strings.Trim(fmt.Sprint(pids), "[]")
	if err := os.WriteFile(file+".tmp", []byte(line), 0o644); err != nil || os.Rename(file+".tmp", file) != nil {
		os.Exit(1)
	}
}

// stubbornServer is a stdio MCP server that ignores SIGTERM and stdin EOF,
// with spawnStubborn's children.
func stubbornServer() {
	spawnStubborn()
	testenv.ServeStubMCP("stubborn", os.Stdin, os.Stdout)
	select {} // stdin closed: keep running all the same
}

// TestGatewayKilledLeavesNothing SIGKILLs a gateway, over HTTP and over
// stdio, while it runs a stdio server and a script tool call whose
// processes and children ignore SIGTERM (children in the same process
// group, in a group of their own, in a session of their own). The
// executors must stop all of them and remove go-plugin's socket
// directories: the gateway cannot, and a parent-death signal would reach
// only the server and the tool themselves.
func TestGatewayKilledLeavesNothing(t *testing.T) {
	_, err := exec.LookPath("bash")
	testenv.Require(t, "bash", err == nil, "install bash (the script tool's runtime)")
	bin := buildSkillgate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"http", "stdio"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			serverPIDs, toolPIDs := filepath.Join(dir, "server.pids"), filepath.Join(dir, "tool.pids")
			toolDir := filepath.Join(dir, "tools", "hang")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(toolDir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(toolDir, "tool.yaml"), "name: hang\ndescription: Hangs.\nruntime: bash\nentry: hang.sh\ninput_schema: {type: object}\n")
			writeFile(t, filepath.Join(toolDir, "hang.sh"), fmt.Sprintf("export %s=tool %s=%q\nexec %q\n", envStub, envPIDFile, toolPIDs, self))
			cfg := filepath.Join(dir, "skillgate.yaml")
			writeFile(t, cfg, fmt.Sprintf("servers:\n  stub: {command: %q, env: {%s: server, %s: %q}}\ntools: {dirs: [%q]}\n",
				self, envStub, envPIDFile, serverPIDs, filepath.Dir(toolDir)))

			addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
			args := []string{"-c", cfg, "run", "--listen", addr}
			if mode == "stdio" {
				args = []string{"-c", cfg, "run", "--stdio"}
			}
			cmd := exec.Command(bin, args...)
			// go-plugin makes its socket directories in TMPDIR.
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var stdin io.WriteCloser
			if mode == "stdio" {
				if stdin, err = cmd.StdinPipe(); err != nil { // open until the gateway dies
					t.Fatal(err)
				}
				defer stdin.Close()
			}
			gw := testenv.Start(t, cmd)
			callHang(t, gw, mode, addr, stdin)

			var pids []int
			names := []string{"mcp executor", "server", "server's child in its group", "server's child in a group of its own", "server's child in a session of its own",
				"script executor", "tool", "tool's child in its group", "tool's child in a group of its own", "tool's child in a session of its own"}
			for _, file := range []string{serverPIDs, toolPIDs} {
				got := waitPIDs(t, gw, file)
				t.Cleanup(func() {
					for _, pid := range got {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
				if len(got) != 5 || parent(got[0]) != gw.PID() {
					t.Fatalf("%s: pids %v, want an executor (a child of the gateway %d), its process and three children", file, got, gw.PID())
				}
				pids = append(pids, got...)
			}
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "plugin-dir*")); len(dirs) != 2 {
				t.Errorf("go-plugin socket directories %v in %s, want one per executor", dirs, tmp)
			}

			_ = syscall.Kill(gw.PID(), syscall.SIGKILL)
			<-gw.Done()
			// The upstream's shutdown: stdin closed, SIGTERM at half the 5 s
			// grace, SIGKILL at its end.
			killed := time.Now()
			for {
				var left []string
				for i, pid := range pids {
					if testenv.Alive(pid) {
						left = append(left, fmt.Sprintf("%s %d (parent %d)", names[i], pid, parent(pid)))
					}
				}
				if len(left) == 0 {
					t.Logf("everything gone %v after the gateway was killed", time.Since(killed).Round(time.Millisecond))
					break
				}
				if time.Since(killed) > 15*time.Second {
					t.Errorf("15 s after the gateway was killed, still running:\n  %s", strings.Join(left, "\n  "))
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "plugin-dir*")); len(dirs) > 0 {
				t.Errorf("go-plugin socket directories left behind: %v", dirs)
			}
		})
	}
}

// callHang starts a call of the hang tool that lasts until the gateway dies.
func callHang(t *testing.T, gw *testenv.Process, mode, addr string, stdin io.Writer) {
	t.Helper()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tools__hang","arguments":{}}}`
	if mode == "stdio" {
		if _, err := io.WriteString(stdin, initialize+"\n"+initialized+"\n"+call+"\n"); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := gw.WaitTCP(addr, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	post := func(session, body string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/mcp", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := post("", initialize)
	if err != nil {
		close(done)
		t.Fatal(err)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp, err = post(session, initialized); err == nil {
		resp.Body.Close()
	}
	go func() {
		defer close(done)
		if resp, err := post(session, call); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // until the gateway dies
			resp.Body.Close()
		}
	}()
}

// waitPIDs waits for a stub to write its pids to file.
func waitPIDs(t *testing.T, gw *testenv.Process, file string) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if data, err := os.ReadFile(file); err == nil {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing wrote %s in 60 s", file)
		}
		select {
		case <-gw.Done():
			t.Fatalf("the gateway exited: %v", gw.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// parent returns the parent pid of pid, 0 if it is gone.
func parent(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}
