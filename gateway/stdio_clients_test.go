package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// stdioEverything builds skillgate and writes a config that serves
// server-everything, for `skillgate run --stdio -c cfg`.
func stdioEverything(t *testing.T, extra ...string) (bin, cfg string) {
	t.Helper()
	everything := testenv.NodeServer(t, "server-everything")
	bin = goBuild(t, "./cmd/skillgate", "skillgate")
	cfg = filepath.Join(t.TempDir(), "skillgate.yaml")
	yaml := "servers:\n  everything:\n    command: " + strconv.Quote(everything[0]) +
		"\n    args: " + jsonArgv(everything[1:]) + "\n" + strings.Join(extra, "")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, cfg
}

// TestStdioOneClientWhateverTheEra: over stdio the gateway has one
// client, whatever protocol era it speaks. The Go SDK (v1.8.0) launches
// the gateway and negotiates 2026-07-28, where every request stands
// alone: a sampling request of server-everything made while another call
// of the same client runs still reaches it, and so does everything asked
// after an elicitation whose handler failed (the client abandons that
// call without a word).
func TestStdioOneClientWhateverTheEra(t *testing.T) {
	testenv.Subreaper(t)
	before := testenv.ChildPIDs()
	bin, cfg := stdioEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var elicitations atomic.Int32
	progressed := make(chan struct{}, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 the gateway must relay sampling while servers use it
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 see above
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled over stdio"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicitations.Add(1)
			return nil, errors.New("the user closed the dialog")
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		},
	})
	//lint:ignore SA1019 the gateway must relay roots while servers ask for them
	c.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	var stderr testenv.Buffer
	cmd := exec.Command(bin, "run", "--stdio", "-c", cfg, "--log-level", "debug")
	cmd.Stderr = &stderr
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult(); v != nil && v.ProtocolVersion != "2026-07-28" {
		t.Logf("the Go SDK negotiated %s", v.ProtocolVersion)
	}

	// A long call runs; the same client's sampling call overlaps it.
	long := make(chan string, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 4, "steps": 4}}
		params.SetProgressToken("long")
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			long <- err.Error()
			return
		}
		long <- goSDKText(res)
	}()
	select {
	case <-progressed:
	case <-ctx.Done():
		t.Fatal("no progress from the long-running operation")
	}
	if text, isErr := goSDKCall(t, ctx, cs, "everything__trigger-sampling-request", map[string]any{"prompt": "hi"}); isErr || !strings.Contains(text, "sampled over stdio") {
		t.Errorf("sampling while another call of the same client runs: %q (isError %v)", text, isErr)
	}
	if got := <-long; !strings.Contains(got, "completed") {
		t.Errorf("long-running operation: %q", got)
	}

	// An elicitation whose handler fails: the client gives the call up.
	if text, err := goSDKCallErr(ctx, cs, "everything__trigger-elicitation-request", map[string]any{}); err == nil {
		t.Logf("elicitation with a failing handler: %q", text)
	}
	if elicitations.Load() == 0 {
		t.Error("the elicitation did not reach the client")
	}
	if text, isErr := goSDKCall(t, ctx, cs, "everything__trigger-sampling-request", map[string]any{"prompt": "again"}); isErr || !strings.Contains(text, "sampled over stdio") {
		t.Errorf("sampling after an abandoned elicitation: %q (isError %v)", text, isErr)
	}
	if text, isErr := goSDKCall(t, ctx, cs, "everything__get-roots-list", map[string]any{}); isErr || !strings.Contains(text, "file:///work/project") {
		t.Errorf("roots after an abandoned elicitation: %q (isError %v)", text, isErr)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	for _, refused := range []string{"calls of several clients", "no client call caused it"} {
		if strings.Contains(stderr.String(), refused) {
			t.Errorf("the gateway logged %q for its one stdio client:\n%s", refused, stderr.String())
		}
	}
	waitNoNewChildren(t, before, 15*time.Second)
}

// goSDKText is the text content of a Go SDK tool result.
func goSDKText(res *mcp.CallToolResult) string {
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n")
}

// TestStdioUndeclaredCapabilityReal: a raw stdio client that declared no
// capabilities calls server-everything's sampling and roots tools. It is
// sent neither request (it could not answer them, and the call would hang
// until its timeout): sampling is refused at once, roots/list answered
// with no roots.
func TestStdioUndeclaredCapabilityReal(t *testing.T) {
	testenv.Subreaper(t)
	before := testenv.ChildPIDs()
	bin, cfg := stdioEverything(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, stderr := startStdioGateway(t, bin, cfg)
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	// Far below the request timeout (60 s): a hang fails here.
	callCtx, callCancel := context.WithTimeout(ctx, 30*time.Second)
	defer callCancel()
	res, err := p.request(callCtx, "tools/call", `{"name":"everything__trigger-sampling-request","arguments":{"prompt":"hi"}}`)
	if err != nil || !strings.Contains(string(res), "did not declare the sampling capability") {
		t.Errorf("sampling for a client without the capability = %s, %v", res, err)
	}
	res, err = p.request(callCtx, "tools/call", `{"name":"everything__get-roots-list","arguments":{}}`)
	if err != nil || strings.Contains(string(res), `"isError":true`) {
		t.Errorf("get-roots-list for a client without the roots capability = %s, %v", res, err)
	}
	for _, line := range p.stdout() {
		if strings.Contains(string(line), `"method":"sampling/createMessage"`) || strings.Contains(string(line), `"method":"roots/list"`) {
			t.Errorf("the client was sent a request it declared no capability for: %s", line)
		}
	}
	if err := p.close(t); err != nil {
		t.Errorf("exit: %v", err)
	}
	waitNoNewChildren(t, before, 15*time.Second)
}

// TestStdioClientGoesMidCall: the client dies while a call streams
// progress, closing the gateway's stdout (and stderr) pipes with stdin
// still open. The gateway must not die of SIGPIPE: it stops as on stdin
// EOF, logs why, stops the servers it started (a container too) and
// exits 0.
func TestStdioClientGoesMidCall(t *testing.T) {
	testenv.Subreaper(t)
	before := testenv.ChildPIDs()
	// A server that requires a service: the gateway starts the service's
	// container with the server, and must remove it when it stops.
	kvCtx := testenv.StaticImage(t, "services/testdata/kv", "")
	echoDir := testenv.StaticImage(t, "services/testdata/mcpecho", echoTestImage)
	proj := fmt.Sprintf("gwpipe%d", os.Getpid())
	project := "label=" + services.LabelProject + "=" + proj
	t.Cleanup(func() { testenv.WaitNoContainers(t, 20*time.Second, project) })
	bin, cfg := stdioEverything(t, "  local: {command: "+strconv.Quote(filepath.Join(echoDir, "mcpecho"))+", requires: [kv]}\n"+kvServiceYAML(proj, kvCtx))
	logPath := filepath.Join(t.TempDir(), "stderr.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	for _, closeStderr := range []bool{false, true} {
		name := "stdout"
		if closeStderr {
			name = "stdout and stderr"
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, "run", "--stdio", "-c", cfg)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = outW
			var errR *os.File
			if closeStderr {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				errR, cmd.Stderr = r, w
				defer w.Close()
			} else {
				_ = logFile.Truncate(0)
				cmd.Stderr = logFile
			}
			proc := testenv.Start(t, cmd)
			outW.Close()
			if errR != nil {
				cmd.Stderr.(*os.File).Close()
			}
			rd := bufio.NewReader(outR)
			send := func(msg string) {
				if _, err := stdin.Write([]byte(msg + "\n")); err != nil {
					t.Fatal(err)
				}
			}
			waitFor := func(want string) {
				t.Helper()
				for {
					line, err := rd.ReadString('\n')
					if err != nil {
						t.Fatalf("stdout ended before %s: %v", want, err)
					}
					if strings.Contains(line, want) {
						return
					}
				}
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"dies","version":"0"}}}`)
			waitFor(`"id":1`)
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"everything__trigger-long-running-operation","arguments":{"duration":30,"steps":60},"_meta":{"progressToken":"p"}}}`)
			waitFor(`"notifications/progress"`)
			for deadline := time.Now().Add(time.Minute); len(testenv.Containers(t, project)) == 0; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the kv service's container never ran")
				}
			}
			// The client dies: its ends of the pipes close; stdin stays
			// open (a dying client's descriptors may linger elsewhere).
			outR.Close()
			if errR != nil {
				errR.Close()
			}
			select {
			case <-proc.Done():
			case <-time.After(40 * time.Second):
				t.Fatal("the gateway still runs 40 s after its client closed stdout")
			}
			var ee *exec.ExitError
			if err := proc.Err(); errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Fatalf("the gateway died of %v instead of shutting down", ws.Signal())
				}
				t.Errorf("the gateway exited with %v; want status 0, as on stdin EOF", err)
			} else if err != nil {
				t.Errorf("wait: %v", err)
			}
			if !closeStderr {
				logged, _ := os.ReadFile(logPath)
				if !strings.Contains(string(logged), "stopping") || !strings.Contains(string(logged), "closed stdout") {
					t.Errorf("no \"stopping\" log line naming the closed stdout:\n%s", logged)
				}
			}
			waitNoNewChildren(t, before, 15*time.Second)
			testenv.WaitNoContainers(t, 20*time.Second, project)
		})
	}
}

// TestStdioEOFDuringStartWait: a client that sends its first request while
// a server still starts (limits.start_wait holds it) and then closes stdin
// has gone; the gateway stops at once instead of at the wait's end (a
// client that restarts it would run two gateways meanwhile).
func TestStdioEOFDuringStartWait(t *testing.T) {
	testenv.Subreaper(t)
	before := testenv.ChildPIDs()
	bin := goBuild(t, "./cmd/skillgate", "skillgate")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	// A server that never answers initialize keeps the gateway starting
	// for its start_timeout, and the first request waiting for start_wait.
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	yaml := "limits: {start_wait: 2m}\nservers:\n  slow:\n    command: " + strconv.Quote(sleep) + "\n    args: [\"600\"]\n    start_timeout: 2m\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, stderr := startStdioGateway(t, bin, cfg)
	if err := p.notify("notifications/initialized", ""); err != nil { // any first line
		t.Fatal(err)
	}
	_, _ = p.stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gone","version":"0"}}}` + "\n"))
	_ = p.stdin.Close()
	select {
	case <-p.proc.Done():
	case <-time.After(time.Minute):
		// Far less than the 2 min the request would wait.
		t.Fatalf("the gateway still runs a minute after its client closed stdin during the start wait\nstderr:\n%s", stderr.String())
	}
	if err := p.proc.Err(); err != nil {
		t.Errorf("exit: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping") {
		t.Errorf("no stopping line:\n%s", stderr.String())
	}
	waitNoNewChildren(t, before, 15*time.Second)
}
