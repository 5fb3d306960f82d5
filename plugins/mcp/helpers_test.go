package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// faultServer is the path of the built testdata/faultserver.
var faultServer string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-faultserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	faultServer = filepath.Join(dir, "faultserver")
	cmd := exec.Command("go", "build", "-o", faultServer, "./testdata/faultserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build faultserver: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// harness is an executor served over real gRPC, with its log and changes.
type harness struct {
	t    *testing.T
	e    *Executor
	c    *sdktest.Client
	logs *testenv.Buffer

	mu      sync.Mutex
	changes []sdk.Change
	at      []time.Time // when each change arrived
	kick    chan struct{}
}

// newHarness starts an executor behind sdktest (real gRPC) and watches it.
// opts are added to the harness's own logger.
func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	logs := &testenv.Buffer{}
	e := New(append([]Option{WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)...)
	h := &harness{t: t, e: e, logs: logs, kick: make(chan struct{}, 1)}
	h.c = sdktest.Start(t, e, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.c.Watch(ctx, func(ch sdk.Change) {
			h.mu.Lock()
			h.changes = append(h.changes, ch)
			h.at = append(h.at, time.Now())
			h.mu.Unlock()
			select {
			case h.kick <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		_ = e.Close()
		cancel()
		<-done
		if t.Failed() {
			t.Logf("executor log:\n%s", tailString(logs.String(), 8<<10))
		}
	})
	return h
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// waitChange waits for a change that match accepts.
func (h *harness) waitChange(timeout time.Duration, what string, match func(sdk.Change) bool) sdk.Change {
	h.t.Helper()
	deadline := time.After(timeout)
	seen := 0
	for {
		h.mu.Lock()
		all := h.changes
		h.mu.Unlock()
		for ; seen < len(all); seen++ {
			if match(all[seen]) {
				return all[seen]
			}
		}
		select {
		case <-h.kick:
		case <-deadline:
			h.t.Fatalf("no change %s within %v; got %s", what, timeout, describeChanges(all))
			return sdk.Change{}
		}
	}
}

// statuses returns the status changes of one source so far.
func (h *harness) statuses(source string) []sdk.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []sdk.Status
	for _, ch := range h.changes {
		if ch.Source == source && ch.Status != nil {
			out = append(out, *ch.Status)
		}
	}
	return out
}

// times returns when a source reported a state.
func (h *harness) times(source, state string) []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []time.Time
	for i, ch := range h.changes {
		if ch.Source == source && ch.Status != nil && ch.Status.State == state {
			out = append(out, h.at[i])
		}
	}
	return out
}

func describeChanges(all []sdk.Change) string {
	var b strings.Builder
	for _, ch := range all {
		switch {
		case ch.Status != nil:
			fmt.Fprintf(&b, "\n  %s status %+v", ch.Source, *ch.Status)
		case ch.Definitions != nil:
			fmt.Fprintf(&b, "\n  %s definitions (%d tools)", ch.Source, len(ch.Definitions.Tools))
		case ch.Notification != nil:
			fmt.Fprintf(&b, "\n  %s notification %s %s", ch.Source, ch.Notification.Method, ch.Notification.Params)
		}
	}
	return b.String()
}

// load loads a source and fails the test on error.
func (h *harness) load(source string, spec any) sdk.Definitions {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defs, err := h.c.Load(ctx, sdk.LoadRequest{Source: source, Kind: Kind, Spec: mustJSON(spec)})
	if err != nil {
		h.t.Fatalf("load %s: %v", source, err)
	}
	return defs
}

// call calls a tool and returns its result.
func (h *harness) call(source, tool string, args any, rec *sdktest.Recorder) (json.RawMessage, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return h.callCtx(ctx, source, tool, args, rec)
}

func (h *harness) callCtx(ctx context.Context, source, tool string, args any, rec *sdktest.Recorder) (json.RawMessage, error) {
	if rec == nil {
		rec = &sdktest.Recorder{}
	}
	params := mustJSON(map[string]any{"name": tool, "arguments": args})
	return h.c.Call(ctx, sdk.CallRequest{Source: source, Method: "tools/call", Params: params}, rec)
}

// mustCall calls a tool and fails the test on error.
func (h *harness) mustCall(source, tool string, args any, rec *sdktest.Recorder) json.RawMessage {
	h.t.Helper()
	res, err := h.call(source, tool, args, rec)
	if err != nil {
		h.t.Fatalf("call %s/%s: %v", source, tool, err)
	}
	return res
}

// text is the first text content of a CallToolResult.
func text(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a CallToolResult with content: %s", truncate(string(res), 300))
	}
	return r.Content[0].Text
}

// toolNames lists the names of raw tool definitions.
func toolNames(t *testing.T, tools []json.RawMessage) []string {
	t.Helper()
	var names []string
	for _, raw := range tools {
		var tool struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatalf("tool %s: %v", raw, err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// fault is the spec of a faultserver source.
func fault(args ...string) map[string]any {
	return map[string]any{"command": faultServer, "args": args, "shutdown_grace": "1s"}
}

// isUnavailable checks an error is sdk.ErrUnavailable saying want. It
// names the source at most once: the executor's caller names it (the
// gateway says "tool (source name)"), so the executor's own words need
// not, and must not repeat it.
func isUnavailable(t *testing.T, err error, source, want string) {
	t.Helper()
	if !errors.Is(err, sdk.ErrUnavailable) || strings.Count(err.Error(), fmt.Sprintf("%q", source)) > 1 || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v; want sdk.ErrUnavailable saying %q, naming source %q at most once", err, want, source)
	}
}

// leakBaseline is what the process holds before a test starts things.
type leakBaseline struct {
	goroutines, fds int
	children        map[int]bool // servers the test itself runs
}

// warmBaseline starts and stops an executor over gRPC once (gRPC starts
// process-wide goroutines on first use), then takes the baseline.
func warmBaseline(t *testing.T) leakBaseline {
	t.Run("warm up", func(t *testing.T) { newHarness(t) })
	return takeBaseline()
}

func takeBaseline() leakBaseline {
	b := leakBaseline{goroutines: len(ownGoroutines()), fds: countFDs(), children: map[int]bool{}}
	for _, pid := range testenv.ChildPIDs() {
		b.children[pid] = true
	}
	return b
}

// newChildren are child processes that were not there at the baseline.
func (b leakBaseline) newChildren() []int {
	var out []int
	for _, pid := range testenv.ChildPIDs() {
		if !b.children[pid] {
			out = append(out, pid)
		}
	}
	return out
}

func countFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// ownGoroutines returns the stacks of goroutines that run code of this
// package, of mcp-go, or hold HTTP connections: what the executor could leak.
// The gRPC harness keeps goroutines of its own (sdktest, go-plugin), which
// are not the executor's to clean up.
func ownGoroutines() []string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var own []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		switch {
		case strings.Contains(g, "skillgate/plugins/mcp.") && !strings.Contains(g, "_test.go"),
			strings.Contains(g, "mark3labs/mcp-go"),
			strings.Contains(g, "net/http.(*persistConn)"):
			own = append(own, g)
		}
	}
	return own
}

// checkNoLeaks waits for child processes, the executor's goroutines and
// file descriptors to come back to the baseline.
func checkNoLeaks(t *testing.T, base leakBaseline) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, fds, kids := ownGoroutines(), countFDs(), base.newChildren()
		if len(g) <= base.goroutines && fds <= base.fds && len(kids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leak: child processes %v, %d goroutines (baseline %d), %d fds (baseline %d)\n%s",
				kids, len(g), base.goroutines, fds, base.fds, strings.Join(g, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
