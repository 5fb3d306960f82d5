//go:build linux

package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/mcp"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/hostside"
)

// The test binary doubles as the plugin (go-plugin's helperProcess pattern):
// run with envMode set, it behaves as the mode says instead of running tests.
const (
	envMode      = "SKILLGATE_HOST_TEST_MODE"
	envExitAfter = "SKILLGATE_HOST_TEST_EXIT_AFTER_INFO" // a duration: exit 3 that long after Info
	envLinger    = "SKILLGATE_HOST_TEST_LINGER"          // keep running after sdk.Serve returns
	envTermFile  = "SKILLGATE_HOST_TEST_TERM_FILE"       // mcpserver: created on SIGTERM, before exiting
	envHelperPID = "SKILLGATE_HOST_TEST_HELPER_PID"      // mcpserver: where its helper's pid goes
	envRuns      = "SKILLGATE_HOST_TEST_RUNS"            // a file that gets a line each time the helper runs
	envFlaky     = "SKILLGATE_HOST_TEST_FLAKY"           // flaky: a file; it exits 1 until it exists, creating it
	envDaemonPID = "SKILLGATE_HOST_TEST_DAEMON_PID"      // mcpserver: a file that gets a line with each daemon's pid
)

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(envMode); ok {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	if file := os.Getenv(envRuns); file != "" {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, mode)
			_ = f.Close()
		}
	}
	switch mode {
	case "serve":
		sdk.Serve(newEcho())
		if os.Getenv(envLinger) != "" {
			time.Sleep(time.Hour)
		}
	case "garbage":
		fmt.Println("hello, I am not a plugin")
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: config missing")
		return 1
	case "flaky":
		// Fails its first start (a resource not there yet), then serves.
		file := os.Getenv(envFlaky)
		if _, err := os.Stat(file); err != nil {
			_ = os.WriteFile(file, nil, 0o644)
			fmt.Fprintln(os.Stderr, "not ready yet")
			return 1
		}
		sdk.Serve(newEcho())
	case "nokinds":
		sdk.Serve(noKinds{newEcho()})
	case "stdoutfirst":
		// An executor that prints a banner before it serves.
		fmt.Println("starting echo v0.0.1 ...")
		sdk.Serve(newEcho())
	case "slowinfo":
		sdk.Serve(slowInfo{newEcho()})
	case "badcookie":
		// A go-plugin plugin of some other program.
		hs := hostside.Handshake()
		hs.MagicCookieValue = "another-program"
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: hs, Plugins: hostside.PluginSet(newEcho(), nil, 0), GRPCServer: hostside.NewGRPCServer})
	case "hang":
		time.Sleep(time.Hour)
	case "builtin-mcp":
		// The built-in mcp executor as `skillgate plugin serve mcp` runs it.
		host.ServeBuiltin(mcp.New(mcp.WithLogger(slog.New(slog.NewJSONHandler(os.Stderr, nil)))), nil)
	case "mcpserver":
		mcpServer()
	case "daemonize":
		// The middle of a double fork: start a daemon in a session of its
		// own, note its pid, and exit, so that it is re-parented.
		cmd := exec.Command("sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		f, err := os.OpenFile(os.Getenv(envDaemonPID), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(f, cmd.Process.Pid)
		_ = f.Close()
	case "future":
		// An executor of a protocol this gateway does not know yet.
		hs := hostside.Handshake()
		hs.ProtocolVersion = sdk.ProtocolVersion + 7
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: hs, Plugins: hostside.PluginSet(newEcho(), nil, 0), GRPCServer: hostside.NewGRPCServer})
	case "v1":
		// An executor built against an SDK that spoke only protocol 1: a
		// single-version handshake, and no Calls stream.
		hs := hostside.Handshake()
		hs.ProtocolVersion = 1
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: hs,
			Plugins:         hostside.PluginSet(newEcho(), nil, 1),
			GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
				return hostside.NewGRPCServer(append(opts, grpc.StreamInterceptor(refuseCalls)))
			},
		})
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	return 0
}

// echo is the test executor.
type echo struct {
	mu      sync.Mutex
	host    sdk.Host
	changes chan sdk.Change
}

func newEcho() *echo { return &echo{changes: make(chan sdk.Change, 16)} }

func (e *echo) SetHost(h sdk.Host) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.host = h
}

func (e *echo) Info(context.Context) (sdk.Info, error) {
	if d, err := time.ParseDuration(os.Getenv(envExitAfter)); err == nil {
		time.AfterFunc(d, func() { os.Exit(3) })
	}
	return sdk.Info{Name: "echo", Version: "1.0.0", Kinds: []string{"echo"}}, nil
}

func (e *echo) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if bytes.Contains(req.Spec, []byte("fail")) {
		return sdk.Definitions{}, fmt.Errorf("%w: asked to fail", sdk.ErrInvalidSpec)
	}
	if bytes.Contains(req.Spec, []byte("hang")) {
		time.Sleep(time.Hour) // a Load that ignores its context
	}
	tool := fmt.Sprintf(`{"name":"echo","description":"source %s, pid %d","inputSchema":{"type":"object"}}`, req.Source, os.Getpid())
	return sdk.Definitions{Tools: []json.RawMessage{json.RawMessage(tool)}}, nil
}

func (e *echo) Unload(context.Context, string) error { return nil }

// slowInfo answers Info only when the host gives up on it.
type slowInfo struct{ *echo }

func (slowInfo) Info(ctx context.Context) (sdk.Info, error) {
	<-ctx.Done()
	return sdk.Info{}, ctx.Err()
}

// noKinds answers Info without kinds.
type noKinds struct{ *echo }

func (noKinds) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "nokinds", Version: "1"}, nil
}

func (e *echo) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	switch req.Method {
	case "echo":
		return req.Params, nil
	case "block":
		_ = call.Progress(sdk.Progress{Progress: 1, Message: "blocking"})
		<-ctx.Done()
		return nil, ctx.Err()
	case "exit":
		os.Exit(3)
	case "panic":
		// A panic the SDK cannot recover: it is not in Call's goroutine.
		go panic("boom")
		<-ctx.Done()
		return nil, ctx.Err()
	case "tools/call":
		var p struct{ Name string }
		_ = json.Unmarshal(req.Params, &p)
		if p.Name == "explode" {
			panic("kaboom")
		}
		return json.RawMessage(`{"content":[]}`), nil
	case "spawn", "spawnpg", "spawnsid":
		cmd := exec.Command("sleep", "1000")
		// spawnpg starts it in a process group of its own, as an executor
		// does with an upstream it wants to kill as a tree; spawnsid in a
		// session of its own.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: req.Method == "spawnpg", Setsid: req.Method == "spawnsid"}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = cmd.Wait() }()
		return json.Marshal(map[string]int{"pid": cmd.Process.Pid})
	case "spawnstderr":
		// A child in a session of its own that holds the plugin's real
		// stderr: when the plugin dies, the pipe stays open until the host
		// closes it (drainGrace).
		cmd := exec.Command("sleep", "1000")
		cmd.Stderr = os.NewFile(2, "stderr")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = cmd.Wait() }()
		return json.Marshal(map[string]int{"pid": cmd.Process.Pid})
	case "big":
		var n int
		if err := json.Unmarshal(req.Params, &n); err != nil {
			return nil, err
		}
		return json.Marshal(strings.Repeat("x", n))
	case "env":
		return json.Marshal(os.Environ())
	case "log":
		line := `{"@level":"warn","@message":"disk low","@timestamp":"2026-01-02T03:04:05.000000Z","free":"1"}` + "\n"
		_, _ = syscall.Write(2, []byte(line)) // the real stderr; os.Stderr goes through go-plugin
		fmt.Fprintln(os.Stderr, "plain line")
		e.mu.Lock()
		h := e.host
		e.mu.Unlock()
		return json.RawMessage(`{}`), h.Log(ctx, "info", "via host", map[string]string{"k": "v"})
	case "notify":
		e.changes <- sdk.Change{Source: req.Source, Notification: &sdk.Notification{Method: "notifications/resources/updated", Params: req.Params}}
		return json.RawMessage(`{}`), nil
	}
	return nil, fmt.Errorf("%w: method %s", sdk.ErrUnsupported, req.Method)
}

func (e *echo) Watch(ctx context.Context, emit func(sdk.Change)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ch := <-e.changes:
			emit(ch)
		}
	}
}

// mcpServer is a stdio MCP server that keeps running when its stdin
// closes, so that only a signal stops it. It exits on SIGTERM, creating
// the file envTermFile names first. When envHelperPID is set it starts a
// helper that leaves its session and ignores SIGTERM, and writes the
// helper's pid there. When envDaemonPID is set it starts a daemon by a
// double fork (see "daemonize") before it serves.
func mcpServer() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		_ = os.WriteFile(os.Getenv(envTermFile), nil, 0o644)
		os.Exit(0)
	}()
	if file := os.Getenv(envHelperPID); file != "" {
		cmd := exec.Command("sh", "-c", `trap "" TERM; exec sleep 1000`)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			os.Exit(1)
		}
	}
	if os.Getenv(envDaemonPID) != "" {
		middle := exec.Command(os.Args[0], "-test.run=^$")
		middle.Env = append(os.Environ(), envMode+"=daemonize")
		middle.Stderr = os.Stderr
		if err := middle.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	testenv.ServeStubMCP("stub", os.Stdin, os.Stdout)
	for { // stdin closed: keep running all the same
		time.Sleep(time.Hour)
	}
}

// helperSpec launches the test binary in mode.
func helperSpec(t testing.TB, mode string, env ...string) host.Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A race-enabled binary sleeps 1s at exit unless told otherwise.
	base := []string{envMode + "=" + mode, "GORACE=atexit_sleep_ms=0"}
	return host.Spec{Name: "echo", Path: exe, Env: append(base, env...)}
}

// checkLeaks fails the test if, once it and its cleanups are done, child
// processes are left or goroutines did not wind down. Register it first so
// that it runs last.
func checkLeaks(t *testing.T) {
	t.Helper()
	testenv.Subreaper(t) // orphaned grandchildren become our children and are counted
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		testenv.WaitNoChildren(t, 5*time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				var b strings.Builder
				_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
				t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), b.String())
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// logSink is a slog.Handler that keeps records for assertions.
type logSink struct {
	mu    *sync.Mutex
	recs  *[]logRecord
	attrs []slog.Attr
}

type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

func newLogSink() *logSink { return &logSink{mu: &sync.Mutex{}, recs: &[]logRecord{}} }

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }

func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	for _, a := range s.attrs {
		rec.Attrs[a.Key] = a.Value.Any()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.Any()
		return true
	})
	s.mu.Lock()
	*s.recs = append(*s.recs, rec)
	s.mu.Unlock()
	return nil
}

func (s *logSink) WithAttrs(as []slog.Attr) slog.Handler {
	c := *s
	c.attrs = append(append([]slog.Attr(nil), s.attrs...), as...)
	return &c
}

func (s *logSink) WithGroup(string) slog.Handler { return s }

func (s *logSink) records() []logRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]logRecord(nil), *s.recs...)
}

// dumpOnFailure logs the records when the test failed.
func (s *logSink) dumpOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, r := range s.records() {
			if r.Level >= slog.LevelInfo || r.Attrs["stream"] != nil {
				t.Logf("%v %s %v", r.Level, r.Msg, r.Attrs)
			}
		}
	})
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// changes collects what a watcher receives.
type changes struct {
	mu  sync.Mutex
	all []sdk.Change
}

func (c *changes) emit(ch sdk.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, ch)
}

func (c *changes) find(f func(sdk.Change) bool) (sdk.Change, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.all {
		if f(ch) {
			return ch, true
		}
	}
	return sdk.Change{}, false
}

// watch runs p.Watch for the rest of the test.
func watch(t *testing.T, p *host.Plugin) *changes {
	t.Helper()
	c := &changes{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Watch(ctx, c.emit) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return c
}

// blockingCall is an sdk.Call that reports the first progress.
type blockingCall struct {
	progressed chan struct{}
	once       sync.Once
}

func (c *blockingCall) Progress(sdk.Progress) error {
	c.once.Do(func() { close(c.progressed) })
	return nil
}
func (c *blockingCall) Notify(sdk.Notification) error { return nil }
func (c *blockingCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}
func (c *blockingCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

func startPlugin(t *testing.T, spec host.Spec, opts host.Options) *host.Plugin {
	t.Helper()
	p, err := host.Start(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func isShutdown(err error) bool { return errors.Is(err, sdk.ErrPluginShutdown) }

// refuseCalls makes a protocol 1 executor of the v1 helper: the SDK serves
// the Calls stream, an executor built before protocol 2 did not.
func refuseCalls(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if strings.HasSuffix(info.FullMethod, "/Calls") {
		return status.Error(codes.Unimplemented, "unknown method Calls (a protocol 1 executor)")
	}
	return handler(srv, ss)
}
