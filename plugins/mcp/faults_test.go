//go:build linux

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/childproc"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestFaults runs misbehaving upstreams (testdata/faultserver, a real
// process) next to a healthy one on the same executor: each fault fails
// fast with a clear error or succeeds, the healthy source keeps serving, a
// dead upstream restarts with backoff, and nothing leaks afterwards.
func TestFaults(t *testing.T) {
	testenv.Subreaper(t) // grandchildren left behind would show up as children
	base := warmBaseline(t)
	t.Run("cases", func(t *testing.T) {
		h := newHarness(t)
		h.load("healthy", fault())
		// healthy is called concurrently with every fault below.
		healthy := func(t *testing.T) {
			t.Helper()
			if got := text(t, h.mustCall("healthy", "echo", map[string]any{"text": "still here"}, nil)); got != "still here" {
				t.Fatalf("healthy echo = %q", got)
			}
		}

		t.Run("definitions are raw and complete", func(t *testing.T) {
			defs := h.load("paged", fault("-pages", "4"))
			if got := toolNames(t, defs.Tools); len(got) != 17 || got[0] != "echo" || got[16] != "stderr" {
				t.Fatalf("tools over 4 pages = %v", got)
			}
			// Numbers and unknown fields exactly as the upstream wrote them.
			want := `{"name":"echo","inputSchema":{"type":"object"},"x-extra":{"big":12345678901234567890,"f":1.0}}`
			if string(defs.Tools[0]) != want {
				t.Fatalf("tool = %s, want %s", defs.Tools[0], want)
			}
			if len(defs.Resources) != 1 || string(defs.Resources[0]) != `{"uri":"fault://a","name":"a","x-extra":{"n":1.50}}` {
				t.Fatalf("resources = %s", defs.Resources)
			}
			if len(defs.Prompts) != 1 || string(defs.Prompts[0]) != `{"name":"p","x-extra":true}` {
				t.Fatalf("prompts = %s", defs.Prompts)
			}
			if !strings.Contains(string(defs.Server), `"x-future":{"kept":true}`) {
				t.Fatalf("server = %s", defs.Server)
			}
			res := h.mustCall("paged", "echo", map[string]any{"text": "x"}, nil)
			if string(res) != `{"content":[{"type":"text","text":"x"}],"x-result-extra":[1,2.50]}` {
				t.Fatalf("result = %s", res)
			}
		})

		t.Run("exit at start", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "dead", Kind: Kind, Spec: mustJSON(fault("-exit-at-start"))})
			isUnavailable(t, err, "dead", "exit status 3")
			if !strings.Contains(err.Error(), "missing configuration FAULT_TOKEN") {
				t.Fatalf("err = %v; want the last stderr line", err)
			}
			if _, err := h.call("dead", "echo", nil, nil); !errors.Is(err, sdk.ErrUnknownSource) {
				t.Fatalf("call after failed load: %v", err)
			}
			healthy(t)
		})

		t.Run("crash mid-call restarts with backoff", func(t *testing.T) {
			h.load("crashy", fault())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); healthy(t) }()
			start := time.Now()
			_, err := h.call("crashy", "crash", nil, nil)
			isUnavailable(t, err, "crashy", "killed by signal")
			if !strings.Contains(err.Error(), "crashing now") {
				t.Fatalf("err = %v; want the last stderr line", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("the call took %v to fail", d)
			}
			wg.Wait()
			h.waitChange(10*time.Second, "crashy ready again", func(ch sdk.Change) bool {
				return ch.Source == "crashy" && ch.Status != nil && ch.Status.State == StateReady && ch.Status.Restarts == 1
			})
			var states []string
			for _, st := range h.statuses("crashy") {
				states = append(states, st.State)
			}
			if got := strings.Join(states, ","); !strings.HasSuffix(got, "starting,ready,failed,restarting,ready") {
				t.Fatalf("states = %s", got)
			}
			if got := text(t, h.mustCall("crashy", "echo", map[string]any{"text": "back"}, nil)); got != "back" {
				t.Fatalf("echo after restart = %q", got)
			}
		})

		t.Run("exit mid-call", func(t *testing.T) {
			h.load("exits", fault())
			_, err := h.call("exits", "exit", nil, nil)
			isUnavailable(t, err, "exits", "exit status 7")
			healthy(t)
		})

		t.Run("restart loop backs off until fixed", func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "broken")
			h.load("loop", fault("-exit-if-exists", marker))
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := h.call("loop", "crash", nil, nil)
			isUnavailable(t, err, "loop", "killed by signal")
			h.waitChange(20*time.Second, "loop failing its third restart", func(ch sdk.Change) bool {
				return ch.Source == "loop" && ch.Status != nil && ch.Status.State == StateFailed && ch.Status.Restarts >= 3
			})
			// While it waits for the next attempt, calls fail at once.
			_, err = h.call("loop", "echo", nil, nil)
			if err == nil || !errors.Is(err, sdk.ErrUnavailable) {
				t.Fatalf("call during backoff: %v", err)
			}
			// The waits between attempts grow.
			restartsAt := h.times("loop", StateRestarting)
			if len(restartsAt) < 3 {
				t.Fatalf("statuses = %+v", h.statuses("loop"))
			}
			if g1, g2 := restartsAt[1].Sub(restartsAt[0]), restartsAt[2].Sub(restartsAt[1]); g2 <= g1 {
				t.Fatalf("backoff did not grow: %v then %v", g1, g2)
			}
			if st := h.statuses("loop"); !strings.Contains(st[len(st)-1].LastError, "marker") {
				t.Fatalf("last status = %+v", st[len(st)-1])
			}
			os.Remove(marker)
			h.waitChange(20*time.Second, "loop ready", func(ch sdk.Change) bool {
				return ch.Source == "loop" && ch.Status != nil && ch.Status.State == StateReady && ch.Status.Restarts >= 3
			})
			healthy(t)
		})

		t.Run("hung call times out and is cancelled upstream", func(t *testing.T) {
			h.load("hangs", fault())
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := h.callCtx(ctx, "hangs", "hang", nil, nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v", err)
			}
			var ids []json.RawMessage
			for range 50 { // the cancellation is sent asynchronously
				_ = json.Unmarshal([]byte(text(t, h.mustCall("hangs", "cancelled", nil, nil))), &ids)
				if len(ids) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(ids) != 1 {
				t.Fatalf("cancelled ids upstream = %s", ids)
			}
		})

		t.Run("spec timeout", func(t *testing.T) {
			spec := fault()
			spec["timeout"] = "300ms"
			h.load("slow", spec)
			_, err := h.call("slow", "hang", nil, nil)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `"slow"`) {
				t.Fatalf("err = %v", err)
			}
		})

		t.Run("banner and garbage on stdout", func(t *testing.T) {
			h.load("noisy", fault("-banner"))
			rec := &sdktest.Recorder{}
			if got := text(t, h.mustCall("noisy", "garbage", nil, rec)); got != "survived garbage" {
				t.Fatalf("garbage = %q", got)
			}
			if len(rec.Notifications) != 1 || !strings.Contains(string(rec.Notifications[0].Params), "among garbage") {
				t.Fatalf("notifications = %+v", rec.Notifications)
			}
			if !strings.Contains(h.logs.String(), "not JSON-RPC") {
				t.Fatal("the garbage was not logged")
			}
		})

		t.Run("5 MB line", func(t *testing.T) {
			h.load("big", fault())
			res := h.mustCall("big", "huge", map[string]any{"bytes": 5 << 20}, nil)
			if got := len(text(t, res)); got != 5<<20 {
				t.Fatalf("text length = %d", got)
			}
			healthy(t)
		})

		t.Run("line over the limit", func(t *testing.T) {
			old := maxMessageBytes
			maxMessageBytes = 1 << 20
			defer func() { maxMessageBytes = old }()
			h.load("toobig", fault())
			_, err := h.call("toobig", "huge", map[string]any{"bytes": 2 << 20}, nil)
			var rpcErr *sdk.RPCError
			if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "over the 1048576-byte limit") {
				t.Fatalf("err = %v", err)
			}
			if got := text(t, h.mustCall("toobig", "echo", map[string]any{"text": "ok"}, nil)); got != "ok" {
				t.Fatalf("echo after = %q", got)
			}
		})

		t.Run("answers with unknown ids", func(t *testing.T) {
			h.load("wrongid", fault())
			if got := text(t, h.mustCall("wrongid", "wrongid", nil, nil)); got != "right id" {
				t.Fatalf("wrongid = %q", got)
			}
		})

		t.Run("stops reading stdin", func(t *testing.T) {
			old := stdinStall
			stdinStall = 300 * time.Millisecond
			defer func() { stdinStall = old }()
			h.load("deaf", fault())
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			_, err := h.callCtx(ctx, "deaf", "stopread", nil, nil)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("stopread: %v", err)
			}
			// Fill the pipe until a write stalls.
			big := strings.Repeat("y", 256<<10)
			start := time.Now()
			_, err = h.call("deaf", "echo", map[string]any{"text": big}, nil)
			isUnavailable(t, err, "deaf", "stopped reading its stdin")
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
			h.waitChange(10*time.Second, "deaf restarted", func(ch sdk.Change) bool {
				return ch.Source == "deaf" && ch.Status != nil && ch.Status.State == StateReady && ch.Status.Restarts == 1
			})
			healthy(t)
		})

		t.Run("notification flood", func(t *testing.T) {
			h.load("flood", fault())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); healthy(t) }()
			rec := &sdktest.Recorder{}
			if got := text(t, h.mustCall("flood", "flood", map[string]any{"n": 20000}, rec)); got != "flooded 20000" {
				t.Fatalf("flood = %q", got)
			}
			wg.Wait()
			if len(rec.Notifications) == 0 || len(rec.Progresses) != 0 {
				t.Fatalf("got %d notifications, %d progress (tokens not ours)", len(rec.Notifications), len(rec.Progresses))
			}
		})

		t.Run("progress and logging in order", func(t *testing.T) {
			rec := &sdktest.Recorder{}
			if got := text(t, h.mustCall("healthy", "progress", map[string]any{"steps": 50}, rec)); got != "done" {
				t.Fatalf("progress = %q", got)
			}
			if len(rec.Progresses) != 50 {
				t.Fatalf("progress events = %d", len(rec.Progresses))
			}
			for i, p := range rec.Progresses {
				if p.Progress != float64(i+1) || p.Total != 50 || p.Message != fmt.Sprintf("step %d", i+1) {
					t.Fatalf("progress[%d] = %+v", i, p)
				}
			}
			if len(rec.Notifications) != 1 || rec.Notifications[0].Method != "notifications/message" ||
				string(rec.Notifications[0].Params) != `{"data":"progress done","level":"info","logger":"fault"}` {
				t.Fatalf("notifications = %+v", rec.Notifications)
			}
		})

		t.Run("rpc error passes unchanged", func(t *testing.T) {
			_, err := h.call("healthy", "rpcerror", nil, nil)
			var rpcErr *sdk.RPCError
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32042 || rpcErr.Message != "custom failure" || string(rpcErr.Data) != `{"why":[1,2.50,"x"]}` {
				t.Fatalf("err = %#v", err)
			}
		})

		t.Run("sampling goes to the calling client", func(t *testing.T) {
			var got json.RawMessage
			rec := &sdktest.Recorder{RequestFunc: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				if method != "sampling/createMessage" {
					return nil, fmt.Errorf("method %s", method)
				}
				got = params
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m","x":12345678901234567890}`), nil
			}}
			res := text(t, h.mustCall("healthy", "sample", nil, rec))
			if !strings.Contains(string(got), `"x-request-extra":12345678901234567890`) {
				t.Fatalf("sampling params = %s", got)
			}
			if !strings.Contains(res, `"text":"sampled"`) || !strings.Contains(res, `12345678901234567890`) {
				t.Fatalf("tool saw %s", res)
			}
			rec.RequestFunc = func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				return nil, &sdk.RPCError{Code: -1, Message: "user declined", Data: json.RawMessage(`{"d":1}`)}
			}
			res = text(t, h.mustCall("healthy", "sample", nil, rec))
			if !strings.Contains(res, `"code":-1`) || !strings.Contains(res, "user declined") || !strings.Contains(res, `"data":{"d":1}`) {
				t.Fatalf("tool saw %s", res)
			}
		})

		t.Run("list_changed and resource updates reach watchers", func(t *testing.T) {
			h.load("grows", fault())
			h.mustCall("grows", "grow", nil, nil)
			ch := h.waitChange(10*time.Second, "grows definitions", func(ch sdk.Change) bool {
				return ch.Source == "grows" && ch.Definitions != nil
			})
			if names := toolNames(t, ch.Definitions.Tools); names[len(names)-1] != "grown-1" || len(ch.Definitions.Prompts) != 1 {
				t.Fatalf("new definitions: tools %v, %d prompts", names, len(ch.Definitions.Prompts))
			}
			h.mustCall("grows", "touch", nil, nil)
			ch = h.waitChange(10*time.Second, "resources/updated", func(ch sdk.Change) bool {
				return ch.Source == "grows" && ch.Notification != nil
			})
			if ch.Notification.Method != "notifications/resources/updated" || string(ch.Notification.Params) != `{"uri":"fault://a"}` {
				t.Fatalf("notification = %+v", ch.Notification)
			}
		})

		t.Run("clean environment and stderr streaming", func(t *testing.T) {
			t.Setenv("SECRET_OF_THE_EXECUTOR", "leak")
			spec := fault()
			spec["env"] = map[string]string{"FAULT_ENV": "from-spec"}
			h.load("env", spec)
			h.mustCall("env", "stderr", map[string]any{"bytes": 10000}, nil)
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(h.logs.String(), "short line after the long one") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, "FAULT_ENV=from-spec") || !strings.Contains(logs, "source=env") {
				t.Fatalf("stderr not streamed with the source name:\n%s", tailString(logs, 2000))
			}
			if strings.Contains(logs, strings.Repeat("e", maxStderrLine+1)) || !strings.Contains(logs, "(10001 bytes)") {
				t.Fatal("a long stderr line was not cut")
			}
			pid := h.e.Status()["env"].PID
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, kv := range strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00") {
				k, _, _ := strings.Cut(kv, "=")
				keys = append(keys, k)
			}
			for _, k := range keys {
				if strings.HasPrefix(k, childproc.TreeEnvPrefix) {
					continue // the mark that finds the server's descendants
				}
				switch k {
				case "PATH", "HOME", "TMPDIR", "LANG", "FAULT_ENV":
				default:
					t.Fatalf("child environment has %s: %v", k, keys)
				}
			}
		})

		t.Run("lazy start", func(t *testing.T) {
			spec := fault()
			spec["start"] = "lazy"
			defs := h.load("lazy", spec)
			if len(defs.Tools) != 17 {
				t.Fatalf("lazy load listed %d tools", len(defs.Tools))
			}
			if st := h.e.Status()["lazy"]; st.State != StateStopped || st.PID != 0 {
				t.Fatalf("after lazy load: %+v", st)
			}
			if got := text(t, h.mustCall("lazy", "echo", map[string]any{"text": "woke"}, nil)); got != "woke" {
				t.Fatalf("echo = %q", got)
			}
			if st := h.e.Status()["lazy"]; st.State != StateReady || st.PID == 0 {
				t.Fatalf("after first call: %+v", st)
			}
		})

		t.Run("unload kills the process group", func(t *testing.T) {
			h.load("spawner", fault())
			gpid, _ := strconv.Atoi(text(t, h.mustCall("spawner", "spawn", nil, nil)))
			leader := h.e.Status()["spawner"].PID
			if len(testenv.GroupPIDs(leader)) != 2 {
				t.Fatalf("group %d = %v", leader, testenv.GroupPIDs(leader))
			}
			if err := h.c.Unload(context.Background(), "spawner"); err != nil {
				t.Fatal(err)
			}
			if pids := testenv.GroupPIDs(leader); len(pids) != 0 {
				t.Fatalf("group %d still has %v (grandchild %d)", leader, pids, gpid)
			}
			if _, err := h.call("spawner", "echo", nil, nil); !errors.Is(err, sdk.ErrUnknownSource) {
				t.Fatalf("call after unload: %v", err)
			}
		})

		t.Run("shutdown escalates to SIGTERM and SIGKILL", func(t *testing.T) {
			spec := fault("-ignore-eof")
			spec["shutdown_grace"] = "400ms"
			h.load("stubborn", spec)
			spec = fault("-ignore-eof", "-ignore-term")
			spec["shutdown_grace"] = "400ms"
			h.load("mule", spec)
			pids := []int{h.e.Status()["stubborn"].PID, h.e.Status()["mule"].PID}
			for _, name := range []string{"stubborn", "mule"} {
				start := time.Now()
				if err := h.c.Unload(context.Background(), name); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d < 150*time.Millisecond {
					t.Fatalf("%s stopped after %v, before stdin close could be waited for", name, d)
				}
			}
			for _, pid := range pids {
				if err := syscall.Kill(pid, 0); err == nil {
					if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(st), ") Z") {
						t.Fatalf("pid %d still runs", pid)
					}
				}
			}
		})

		t.Run("a stop reaches the server's descendants", func(t *testing.T) {
			// The helper leaves the server's session and ignores SIGTERM: no
			// signal to the server's process group reaches it, and once the
			// server is gone nothing ties it to the server.
			for _, tc := range []struct {
				name string
				args []string
			}{
				{"server exits on EOF", nil},
				{"server killed at the end of its grace", []string{"-ignore-eof", "-ignore-term"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					spec := fault(tc.args...)
					spec["shutdown_grace"] = "400ms"
					h.load("helped", spec)
					helper, err := strconv.Atoi(text(t, h.mustCall("helped", "spawn", map[string]any{"session": true}, nil)))
					if err != nil || !testenv.Alive(helper) {
						t.Fatalf("no helper running: %d, %v", helper, err)
					}
					t.Cleanup(func() { _ = syscall.Kill(helper, syscall.SIGKILL) })
					if err := h.c.Unload(context.Background(), "helped"); err != nil {
						t.Fatal(err)
					}
					// SIGKILL takes effect when the process is next scheduled.
					deadline := time.Now().Add(2 * time.Second)
					for testenv.Alive(helper) {
						if time.Now().After(deadline) {
							t.Fatalf("the server's helper %d (a session of its own) still runs after Unload", helper)
						}
						time.Sleep(10 * time.Millisecond)
					}
				})
			}
		})

		t.Run("a stop fits the caller's deadline", func(t *testing.T) {
			// A 30s grace that would end after the 4s deadline is shortened:
			// the server, which ignores EOF, still gets SIGTERM (and exits of
			// it) before the deadline, rather than SIGKILL after it. SIGTERM
			// comes halfway through the shortened grace; the other half is
			// for the server to exit and the stop to return, which takes the
			// better part of a second on a busy 2-core machine.
			for _, how := range []string{"unload", "shutdown"} {
				t.Run(how, func(t *testing.T) {
					logs := &testenv.Buffer{}
					e := New(WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
					defer e.Close()
					c := sdktest.Start(t, e, nil)
					spec := fault("-ignore-eof")
					spec["shutdown_grace"] = "30s"
					if _, err := c.Load(context.Background(), sdk.LoadRequest{Source: "slow", Kind: Kind, Spec: mustJSON(spec)}); err != nil {
						t.Fatal(err)
					}
					pid := e.Status()["slow"].PID
					const deadline = 4 * time.Second
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					defer cancel()
					start := time.Now()
					var err error
					if how == "unload" {
						err = c.Unload(ctx, "slow") // the deadline crosses gRPC
					} else {
						err = e.Shutdown(ctx)
					}
					if d := time.Since(start); err != nil || d > deadline {
						t.Fatalf("%s returned %v after %v; want nil within the %v deadline", how, err, d, deadline)
					}
					if testenv.Alive(pid) {
						t.Fatalf("server %d still runs", pid)
					}
					if l := logs.String(); !strings.Contains(l, "shortened") || strings.Contains(l, "did not exit in time") {
						t.Fatalf("want the grace shortened and the server ended by SIGTERM; log:\n%s", tailString(l, 3000))
					}
				})
			}
		})

		t.Run("invalid spec", func(t *testing.T) {
			_, err := h.c.Load(context.Background(), sdk.LoadRequest{Source: "bad", Kind: Kind, Spec: json.RawMessage(`{"command":"x","timeout":"soon","colour":1}`)})
			if !errors.Is(err, sdk.ErrInvalidSpec) || !strings.Contains(err.Error(), "colour") {
				t.Fatalf("err = %v", err)
			}
			_, err = h.c.Load(context.Background(), sdk.LoadRequest{Source: "bad", Kind: Kind, Spec: json.RawMessage(`{"command":"no-such-program-here"}`)})
			if err == nil || !strings.Contains(err.Error(), "not found in PATH") {
				t.Fatalf("err = %v", err)
			}
		})
		healthy(t)
	})
	checkNoLeaks(t, base)
}

// TestServerRequestWithoutCall checks that a server request arriving while
// no call is in flight is refused with an explanation.
func TestServerRequestWithoutCall(t *testing.T) {
	e := New()
	s := newSource(e, "lonely", &Spec{})
	c := newConn(s)
	_, err := c.onRequest(context.Background(), "sampling/createMessage", json.RawMessage(`{}`))
	var rpcErr *sdk.RPCError
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "no client call is active") || !strings.Contains(rpcErr.Message, `"lonely"`) {
		t.Fatalf("err = %v", err)
	}
	if res, err := c.onRequest(context.Background(), "ping", nil); err != nil || string(res) != "{}" {
		t.Fatalf("ping = %s, %v", res, err)
	}
	if res, err := c.onRequest(context.Background(), "roots/list", nil); err != nil || string(res) != `{"roots":[]}` {
		t.Fatalf("roots/list = %s, %v", res, err)
	}
}

// TestInProcess uses the executor directly, as the gateway does with
// isolation: inprocess.
func TestInProcess(t *testing.T) {
	base := takeBaseline()
	e := New()
	ctx := context.Background()
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "f", Kind: Kind, Spec: mustJSON(fault())}); err != nil {
		t.Fatal(err)
	}
	// Loading the same spec again re-lists the running upstream.
	pid := e.Status()["f"].PID
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "f", Kind: Kind, Spec: mustJSON(fault())}); err != nil || e.Status()["f"].PID != pid {
		t.Fatalf("reload: %v, pid %d -> %d", err, pid, e.Status()["f"].PID)
	}
	// A nil Call is allowed: no progress token, no routing.
	res, err := e.Call(ctx, sdk.CallRequest{Source: "f", Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"direct"}}`)}, nil)
	if err != nil || text(t, res) != "direct" {
		t.Fatalf("call = %s, %v", res, err)
	}
	_, err = e.Call(ctx, sdk.CallRequest{Source: "f", Method: "tools/call", Params: json.RawMessage(`{"name":`)}, nil)
	var rpcErr *sdk.RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeInvalidParams {
		t.Fatalf("invalid params: %v", err)
	}
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "x", Kind: "wasm", Spec: mustJSON(fault())}); !errors.Is(err, sdk.ErrUnsupported) {
		t.Fatalf("other kind: %v", err)
	}
	if err := e.Unload(ctx, "nope"); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Fatalf("unload unknown: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Load(ctx, sdk.LoadRequest{Source: "f", Kind: Kind, Spec: mustJSON(fault())}); !errors.Is(err, sdk.ErrUnavailable) {
		t.Fatalf("load after close: %v", err)
	}
	checkNoLeaks(t, base)
}

// TestStderrFirstError starts node on a missing script: Node prints the
// error, then more stack lines than the tail keeps; the failure still
// names the error.
func TestStderrFirstError(t *testing.T) {
	node := testenv.NodeServer(t, "server-everything")[0]
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.c.Load(ctx, sdk.LoadRequest{Source: "nope", Kind: Kind,
		Spec: mustJSON(map[string]any{"command": node, "args": []string{"/nonexistent/nope.js"}})})
	if err == nil || !strings.Contains(err.Error(), "Cannot find module '/nonexistent/nope.js'") {
		t.Fatalf("err = %v", err)
	}
}
