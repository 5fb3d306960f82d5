//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// stdioGateway is `skillgate run --stdio` on a config of server-everything
// with limits (YAML appended), initialized as a 2025-11-25 client.
type stdioGateway struct {
	p     *testenv.Process
	in    io.WriteCloser
	lines chan string // stdout, line by line; closed at its end
}

func startStdioGateway(t *testing.T, bin, limits string) *stdioGateway {
	t.Helper()
	argv := testenv.NodeServer(t, "server-everything")
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, "servers:\n  everything:\n    command: "+argv[0]+"\n    args: ["+strings.Join(argv[1:], ", ")+"]\n"+limits)
	cmd := exec.Command(bin, "-c", cfg, "run", "--stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g := &stdioGateway{p: testenv.Start(t, cmd), in: in, lines: make(chan string, 1024)}
	t.Cleanup(func() { in.Close() })
	go func() {
		defer close(g.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			g.lines <- sc.Text()
		}
	}()
	g.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-drain-test","version":"1"}}}`)
	g.next(t, func(m stdioMsg) bool { return string(m.ID) == "1" })
	g.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return g
}

// stdioMsg is what the tests read of a line the gateway wrote.
type stdioMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (g *stdioGateway) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(g.in, line+"\n"); err != nil {
		t.Fatalf("write to the gateway's stdin: %v", err)
	}
}

// next returns the next message for which want is true, skipping others.
func (g *stdioGateway) next(t *testing.T, want func(stdioMsg) bool) stdioMsg {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-g.lines:
			if !ok {
				t.Fatal("the gateway's stdout ended")
			}
			var m stdioMsg
			if json.Unmarshal([]byte(line), &m) == nil && want(m) {
				return m
			}
		case <-timeout:
			t.Fatal("no such message from the gateway within 2 minutes")
		}
	}
}

// answerTo returns the answer to the request with id.
func (g *stdioGateway) answerTo(t *testing.T, id string) stdioMsg {
	t.Helper()
	return g.next(t, func(m stdioMsg) bool { return m.Method == "" && string(m.ID) == id })
}

// longStdioCall calls server-everything's long-running operation for
// seconds, as request 7, and returns once its first progress came: the
// call runs in the upstream.
func (g *stdioGateway) longStdioCall(t *testing.T, seconds int) {
	t.Helper()
	g.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"everything__trigger-long-running-operation","arguments":{"duration":%d,"steps":%d},"_meta":{"progressToken":"p7"}}}`, seconds, seconds))
	g.next(t, func(m stdioMsg) bool { return m.Method == "notifications/progress" })
}

// wantCut checks that m is the error of a request a stopping gateway cut
// or refused.
func wantCut(t *testing.T, what string, m stdioMsg) {
	t.Helper()
	if m.Error == nil || m.Error.Code != -32603 || m.Error.Message != stopMessage {
		t.Errorf("%s: answered %s %+v; want -32603 %q", what, m.Result, m.Error, stopMessage)
	}
}

// wantExit0 waits for the gateway to exit and checks its status.
func (g *stdioGateway) wantExit0(t *testing.T, what string) {
	t.Helper()
	waitExit(t, g.p)
	if err := g.p.Err(); err != nil {
		t.Errorf("%s: exit %v; want status 0", what, err)
	}
}

// TestStdioSIGTERMDrains: `skillgate run --stdio` stops on SIGTERM with
// stdin still open as the HTTP front end does: a call in flight finishes
// within limits.drain_timeout and is answered with its result, a request
// sent meanwhile is answered at once with the stopping error, and the
// gateway exits 0. A call still running when limits.drain_timeout ends,
// or when a second SIGTERM comes, is answered -32603 "the gateway is
// stopping; send the request again".
func TestStdioSIGTERMDrains(t *testing.T) {
	bin := buildSkillgate(t)

	t.Run("finishes within drain_timeout", func(t *testing.T) {
		g := startStdioGateway(t, bin, "limits: {drain_timeout: 10m}\n")
		g.longStdioCall(t, 3)
		if err := g.p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := g.p.WaitOutput("stdio: stopping", time.Minute); err != nil {
			t.Fatal(err)
		}
		g.send(t, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
		wantCut(t, "a request sent while draining", g.answerTo(t, "8"))
		if m := g.answerTo(t, "7"); m.Error != nil || !strings.Contains(string(m.Result), "Long running operation completed") {
			t.Errorf("the call in flight: %s %+v; want its result", m.Result, m.Error)
		}
		g.wantExit0(t, "after the drain")
	})

	t.Run("cut after drain_timeout", func(t *testing.T) {
		g := startStdioGateway(t, bin, "limits: {drain_timeout: 1s}\n")
		g.longStdioCall(t, 600)
		if err := g.p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		wantCut(t, "a call running past drain_timeout", g.answerTo(t, "7"))
		g.wantExit0(t, "after drain_timeout")
		if out := string(g.p.Output()); !strings.Contains(out, "requests still running after limits.drain_timeout") || !strings.Contains(out, "cut=1") {
			t.Errorf("no warning that 1 request was cut:\n%s", out)
		}
	})

	t.Run("cut by a second SIGTERM", func(t *testing.T) {
		g := startStdioGateway(t, bin, "limits: {drain_timeout: 10m}\n")
		g.longStdioCall(t, 600)
		if err := g.p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := g.p.WaitOutput("stdio: stopping", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := g.p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		wantCut(t, "a call running at the second SIGTERM", g.answerTo(t, "7"))
		g.wantExit0(t, "after two SIGTERMs")
	})
}

// TestStdioEOFStopsAtOnce: when the client closes stdin, the gateway does
// not wait out limits.drain_timeout (10m here) for a call in flight: the
// client has left, and the gateway exits 0.
func TestStdioEOFStopsAtOnce(t *testing.T) {
	bin := buildSkillgate(t)
	g := startStdioGateway(t, bin, "limits: {drain_timeout: 10m}\n")
	g.longStdioCall(t, 600)
	g.in.Close()
	g.wantExit0(t, "after stdin closed")
}
