//go:build linux

package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

type logHost struct{ got chan string }

func (h logHost) Log(_ context.Context, level, msg string, attrs map[string]string) error {
	h.got <- level + " " + msg + " " + attrs["k"]
	return nil
}

func TestRoundTrip(t *testing.T) {
	checkLeaks(t)
	t.Setenv("SKILLGATE_HOST_TEST_SECRET", "must-not-leak")
	sink := newLogSink()
	sink.dumpOnFailure(t)
	lh := logHost{got: make(chan string, 1)}
	p := startPlugin(t, helperSpec(t, "serve", "EXTRA=1"), host.Options{Logger: slog.New(sink), Host: lh})
	ctx := context.Background()

	info, err := p.Info(ctx)
	if err != nil || info.Name != "echo" || !slices.Equal(info.Kinds, []string{"echo"}) {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	st := p.Status()
	if st.State != host.StateRunning || st.PID == 0 || !testenv.Alive(st.PID) || st.Restarts != 0 {
		t.Fatalf("Status = %+v", st)
	}

	defs, err := p.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "echo", Spec: json.RawMessage(`{}`)})
	if err != nil || len(defs.Tools) != 1 || !strings.Contains(string(defs.Tools[0]), "source a") {
		t.Fatalf("Load = %+v, %v", defs, err)
	}
	if _, err := p.Load(ctx, sdk.LoadRequest{Source: "bad", Kind: "echo", Spec: json.RawMessage(`"fail"`)}); !errors.Is(err, sdk.ErrInvalidSpec) {
		t.Fatalf("Load bad spec: %v, want ErrInvalidSpec", err)
	}

	res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`{"x":1}`)}, nil)
	if err != nil || string(res) != `{"x":1}` {
		t.Fatalf("Call = %s, %v", res, err)
	}

	t.Run("clean environment", func(t *testing.T) {
		res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "env"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var env []string
		if err := json.Unmarshal(res, &env); err != nil {
			t.Fatal(err)
		}
		for _, kv := range env {
			if strings.HasPrefix(kv, "SKILLGATE_HOST_TEST_SECRET=") {
				t.Errorf("the gateway's environment leaked into the plugin: %s", kv)
			}
		}
		if !slices.Contains(env, "EXTRA=1") || !slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "PATH=") }) {
			t.Errorf("env = %v, want PATH and EXTRA=1", env)
		}
	})

	t.Run("logs", func(t *testing.T) {
		if _, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "log"}, nil); err != nil {
			t.Fatal(err)
		}
		if got := <-lh.got; got != "info via host v" {
			t.Errorf("host Log got %q", got)
		}
		find := func(msg string) (logRecord, bool) {
			for _, r := range sink.records() {
				if r.Msg == msg {
					return r, true
				}
			}
			return logRecord{}, false
		}
		waitFor(t, 5*time.Second, "plugin output in the log", func() bool {
			_, a := find("disk low")
			_, b := find("plain line")
			return a && b
		})
		r, _ := find("disk low")
		if r.Level != slog.LevelWarn || r.Attrs["executor"] != "echo" || r.Attrs["free"] != "1" {
			t.Errorf("JSON stderr line logged as %+v, want warn with executor=echo free=1", r)
		}
		r, _ = find("plain line")
		if r.Level != slog.LevelInfo || r.Attrs["executor"] != "echo" {
			t.Errorf("plain stderr line logged as %+v", r)
		}
	})

	t.Run("large result", func(t *testing.T) {
		const n = 6 << 20 // beyond gRPC's default 4 MiB
		res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "big", Params: json.RawMessage(strconv.Itoa(n))}, nil)
		if err != nil || len(res) != n+2 {
			t.Fatalf("Call big = %d bytes, %v", len(res), err)
		}
	})

	t.Run("watch", func(t *testing.T) {
		c1, c2 := watch(t, p), watch(t, p)
		waitFor(t, 5*time.Second, "notification", func() bool {
			// Watch registers asynchronously; send until both saw one.
			_, _ = p.Call(ctx, sdk.CallRequest{Source: "a", Method: "notify", Params: json.RawMessage(`{"uri":"x"}`)}, nil)
			time.Sleep(20 * time.Millisecond)
			isNote := func(ch sdk.Change) bool { return ch.Notification != nil && ch.Source == "a" }
			_, ok1 := c1.find(isNote)
			_, ok2 := c2.find(isNote)
			return ok1 && ok2
		})
	})

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.Status(); st.State != host.StateStopped || st.PID != 0 {
		t.Errorf("Status after Close = %+v", st)
	}
	if testenv.Alive(st.PID) {
		t.Errorf("plugin pid %d still runs after Close", st.PID)
	}
	_, err = p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo"}, nil)
	if !errors.Is(err, host.ErrClosed) || !isShutdown(err) {
		t.Errorf("Call after Close: %v, want ErrClosed and sdk.ErrPluginShutdown", err)
	}
	if err := p.Watch(ctx, func(sdk.Change) {}); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Watch after Close: %v", err)
	}
}

// TestCrashMidCall crashes the plugin while a call is in flight: the call
// fails with the reason, and the plugin is restarted with its sources.
// With heldStderr, a child the plugin left in a session of its own holds
// its stderr, so that the exit is known only once the host gives up on
// the pipe (drainGrace): later than a crash is on an idle machine, as on
// a loaded one.
func TestCrashMidCall(t *testing.T) {
	for _, tc := range []struct {
		name, method, cause string
		heldStderr          bool
	}{
		{"exit", "exit", "exited: exit status 3", false},
		{"panic", "panic", `panic: boom`, false},
		{"exit, stderr held", "exit", "exited: exit status 3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			sink := newLogSink()
			sink.dumpOnFailure(t)
			p := startPlugin(t, helperSpec(t, "serve"), host.Options{Logger: slog.New(sink), MinBackoff: 10 * time.Millisecond})
			ctx := context.Background()
			got := watch(t, p)
			for _, src := range []string{"a", "b", "gone"} {
				if _, err := p.Load(ctx, sdk.LoadRequest{Source: src, Kind: "echo", Spec: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.heldStderr {
				res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "spawnstderr"}, nil)
				var child struct{ PID int }
				if err != nil || json.Unmarshal(res, &child) != nil || child.PID == 0 {
					t.Fatalf("spawnstderr = %s, %v", res, err)
				}
				t.Cleanup(func() { _ = syscall.Kill(child.PID, syscall.SIGKILL) }) // before checkLeaks' check
			}
			if err := p.Unload(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			oldPID := p.Status().PID

			// One call blocks in the plugin; another one kills it.
			call := &blockingCall{progressed: make(chan struct{})}
			inflight := make(chan error, 1)
			go func() {
				_, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "block"}, call)
				inflight <- err
			}()
			<-call.progressed
			_, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: tc.method}, nil)
			if !isShutdown(err) {
				t.Fatalf("crashing call: %v, want sdk.ErrPluginShutdown", err)
			}
			// The in-flight call fails when its stream breaks, and says why
			// once the exit is seen, however long a loaded machine takes
			// to reap the process (no timeout of the host would end it).
			select {
			case err := <-inflight:
				if !isShutdown(err) || !strings.Contains(err.Error(), `executor "echo" exited`) || !strings.Contains(err.Error(), tc.cause) {
					t.Errorf("in-flight call: %v, want sdk.ErrPluginShutdown naming the executor and %q", err, tc.cause)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("in-flight call still hangs 30s after the plugin died")
			}

			// Restarted, sources re-loaded and announced.
			for _, src := range []string{"a", "b"} {
				waitFor(t, 10*time.Second, "re-loaded definitions of "+src, func() bool {
					_, ok := got.find(func(ch sdk.Change) bool { return ch.Source == src && ch.Definitions != nil })
					return ok
				})
				ch, _ := got.find(func(ch sdk.Change) bool { return ch.Source == src && ch.Definitions != nil })
				if ch.Status == nil || ch.Status.State != "ready" || len(ch.Definitions.Tools) != 1 || strings.Contains(string(ch.Definitions.Tools[0]), "pid "+strconv.Itoa(oldPID)) {
					t.Errorf("re-load change for %s = %+v %s", src, ch.Status, ch.Definitions.Tools)
				}
				if _, ok := got.find(func(ch sdk.Change) bool {
					return ch.Source == src && ch.Status != nil && ch.Status.State == "starting" && strings.Contains(ch.Status.LastError, tc.cause)
				}); !ok {
					t.Errorf("no \"starting\" status change for %s", src)
				}
			}
			if _, ok := got.find(func(ch sdk.Change) bool { return ch.Source == "gone" }); ok {
				t.Error("an unloaded source was re-loaded")
			}
			st := p.Status()
			if st.State != host.StateRunning || st.Restarts != 1 || st.PID == oldPID || !strings.Contains(st.LastError, tc.cause) {
				t.Errorf("Status = %+v", st)
			}
			res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`1`)}, nil)
			if err != nil || string(res) != "1" {
				t.Errorf("call after restart = %s, %v", res, err)
			}
			// The new process offered its own side channel.
			if calls := p.Status().Calls; runtime.GOOS == "linux" && calls != "socket" {
				t.Errorf("after the restart calls ride on %q, want the new process's socket", calls)
			}
			// The watcher now sees the new process's changes.
			if _, err := p.Call(ctx, sdk.CallRequest{Source: "b", Method: "notify", Params: json.RawMessage(`{}`)}, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "notification from the restarted process", func() bool {
				_, ok := got.find(func(ch sdk.Change) bool { return ch.Source == "b" && ch.Notification != nil })
				return ok
			})
		})
	}
}

func TestCrashLoopBacksOff(t *testing.T) {
	checkLeaks(t)
	sink := newLogSink()
	sink.dumpOnFailure(t)
	p := startPlugin(t, helperSpec(t, "serve", envExitAfter+"=50ms"), host.Options{
		Logger:     slog.New(sink),
		MinBackoff: 40 * time.Millisecond,
		MaxBackoff: 2 * time.Second,
	})
	waitFor(t, 20*time.Second, "five restarts", func() bool { return p.Status().Restarts >= 5 })

	var delays []time.Duration
	for _, r := range sink.records() {
		if r.Msg == "executor restarting" {
			delays = append(delays, r.Attrs["delay"].(time.Duration))
		}
	}
	if len(delays) < 5 {
		t.Fatalf("delays = %v", delays)
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] {
			t.Errorf("delay shrank: %v", delays)
		}
	}
	if delays[4] < 4*delays[0] {
		t.Errorf("delays do not grow: %v", delays)
	}
	st := p.Status()
	if !strings.Contains(st.LastError, "exit status 3") || st.Restarts < 5 {
		t.Errorf("Status = %+v", st)
	}
	// The log numbers the restarts as Status.Restarts counts them: 1, 2, ...
	for i, n := range restartCounts(sink) {
		if n != i+1 {
			t.Errorf("restart counts logged %v, want 1, 2, 3, ...", restartCounts(sink))
			break
		}
	}
	if st.State == host.StateRestarting && !st.NextRestart.After(st.Since) {
		t.Errorf("Status = %+v, want NextRestart after Since", st)
	}
}

func TestRestartFailsThenRecovers(t *testing.T) {
	checkLeaks(t)
	sink := newLogSink()
	sink.dumpOnFailure(t)
	exe, _ := os.Executable()
	link := filepath.Join(t.TempDir(), "echo")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	spec := helperSpec(t, "serve")
	spec.Path = link
	p := startPlugin(t, spec, host.Options{Logger: slog.New(sink), MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	ctx := context.Background()
	got := watch(t, p)
	for _, src := range []string{"a", "b"} {
		if _, err := p.Load(ctx, sdk.LoadRequest{Source: src, Kind: "echo"}); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	_, _ = p.Call(ctx, sdk.CallRequest{Source: "a", Method: "exit"}, nil)
	waitFor(t, 10*time.Second, "state failed", func() bool { return p.Status().State == host.StateFailed })
	if st := p.Status(); !strings.Contains(st.LastError, "does not exist") {
		t.Errorf("Status = %+v, want LastError about the missing binary", st)
	}

	// While down: calls fail fast, Unload forgets.
	start := time.Now()
	_, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo"}, nil)
	if !isShutdown(err) || !strings.Contains(err.Error(), `executor "echo"`) {
		t.Errorf("Call while down: %v", err)
	}
	if _, err := p.Load(ctx, sdk.LoadRequest{Source: "c", Kind: "echo"}); !isShutdown(err) {
		t.Errorf("Load while down: %v", err)
	}
	if err := p.Unload(ctx, "b"); err != nil {
		t.Errorf("Unload while down: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("calls while down took %v", d)
	}

	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "running again", func() bool { return p.Status().State == host.StateRunning })
	waitFor(t, 5*time.Second, "re-load of a", func() bool {
		_, ok := got.find(func(ch sdk.Change) bool { return ch.Source == "a" && ch.Definitions != nil })
		return ok
	})
	if _, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`2`)}, nil); err != nil {
		t.Error(err)
	}
	for _, src := range []string{"b", "c"} {
		if _, ok := got.find(func(ch sdk.Change) bool { return ch.Source == src && ch.Definitions != nil }); ok {
			t.Errorf("source %s was re-loaded", src)
		}
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "notexec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A program that is not a plugin, with a grandchild in its group.
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 1000 &\necho not a plugin either\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := helperSpec(t, "serve")
	missing.Path = filepath.Join(dir, "missing")
	noExec := helperSpec(t, "serve")
	noExec.Path = notExec
	scr := helperSpec(t, "serve")
	scr.Path = script
	badName := helperSpec(t, "serve")
	badName.Name = "a b"
	inPath := helperSpec(t, "serve")
	inPath.Path = "true" // looked up in PATH; exits at once
	noPath := helperSpec(t, "serve")
	noPath.Path = ""

	for _, tc := range []struct {
		name    string
		spec    host.Spec
		opts    host.Options
		ctx     time.Duration // a start deadline, when set
		is      error
		mention []string
		not     []string // what the error must not say
	}{
		{name: "missing binary", spec: missing, is: fs.ErrNotExist, mention: []string{`"echo"`, "missing"}},
		{name: "not executable", spec: noExec, is: host.ErrNotExecutable, mention: []string{`"echo"`, "chmod"}},
		{name: "prints garbage", spec: helperSpec(t, "garbage"), is: host.ErrHandshake, mention: []string{`"echo"`, "hello, I am not a plugin", "sdk.Serve"}},
		{name: "shell script", spec: scr, is: host.ErrHandshake, mention: []string{"not a plugin either", "must be built with plugins/sdk and call sdk.Serve"}},
		{name: "prints before Serve", spec: helperSpec(t, "stdoutfirst"), is: host.ErrHandshake,
			mention: []string{"starting echo v0.0.1", "write nothing to stdout before sdk.Serve", "log to stderr"}, not: []string{"must be built with plugins/sdk"}},
		{name: "slow Info", spec: helperSpec(t, "slowinfo"), opts: host.Options{StartTimeout: 2 * time.Second}, is: host.ErrStartTimeout,
			mention: []string{"completed the go-plugin handshake", "Info did not answer within 2s", "keep Info quick; do slow set-up in Load"}, not: []string{"no handshake"}},
		{name: "exits", spec: helperSpec(t, "exit"), is: host.ErrHandshake, mention: []string{"exited before the go-plugin handshake", "exit status 1", "boom: config missing"}},
		{name: "protocol mismatch", spec: helperSpec(t, "future"), is: host.ErrHandshake, mention: []string{"another executor protocol", fmt.Sprintf("versions 1 to %d", sdk.ProtocolVersion)}},
		{name: "timeout", spec: helperSpec(t, "hang"), opts: host.Options{StartTimeout: 500 * time.Millisecond}, is: host.ErrStartTimeout, mention: []string{"500ms"}},
		{name: "context", spec: helperSpec(t, "hang"), ctx: 300 * time.Millisecond, is: context.DeadlineExceeded},
		{name: "bad name", spec: badName, is: host.ErrInvalidName},
		{name: "bare name", spec: inPath, is: host.ErrHandshake, mention: []string{"/true)", "exit status 0"}},
		{name: "no path", spec: noPath, mention: []string{"no program path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			tc.opts.Logger = slog.New(newLogSink())
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			start := time.Now()
			p, err := host.Start(ctx, tc.spec, tc.opts)
			if err == nil {
				p.Close()
				t.Fatal("Start succeeded")
			}
			t.Logf("error: %v", err)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			for _, m := range tc.not {
				if strings.Contains(err.Error(), m) {
					t.Errorf("error %q says %q", err, m)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Start took %v to fail", d)
			}
		})
	}
}

func TestCloseKillsProcessGroup(t *testing.T) {
	checkLeaks(t)
	sink := newLogSink()
	sink.dumpOnFailure(t)
	p := startPlugin(t, helperSpec(t, "serve"), host.Options{Logger: slog.New(sink)})
	ctx := context.Background()
	spawn := func(method string) int {
		res, err := p.Call(ctx, sdk.CallRequest{Method: method}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ PID int }
		if err := json.Unmarshal(res, &out); err != nil {
			t.Fatal(err)
		}
		if !testenv.Alive(out.PID) {
			t.Fatalf("grandchild %d is not running", out.PID)
		}
		return out.PID
	}

	// A crash takes what the plugin started with it, in its process group
	// or in one of their own.
	first, firstPG := spawn("spawn"), spawn("spawnpg")
	_, _ = p.Call(ctx, sdk.CallRequest{Method: "exit"}, nil)
	waitFor(t, 5*time.Second, "grandchildren killed with their crashed parent", func() bool { return !testenv.Alive(first) && !testenv.Alive(firstPG) })
	waitFor(t, 10*time.Second, "restart", func() bool {
		st := p.Status()
		return st.State == host.StateRunning && st.Restarts == 1
	})

	// So does Close, and a call in flight fails at once.
	second, secondPG := spawn("spawn"), spawn("spawnpg")
	pid := p.Status().PID
	call := &blockingCall{progressed: make(chan struct{})}
	inflight := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, sdk.CallRequest{Method: "block"}, call)
		inflight <- err
	}()
	<-call.progressed
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > host.DefaultKillWindow {
		t.Errorf("Close of a cooperative plugin took %v", d)
	}
	if err := <-inflight; !errors.Is(err, host.ErrClosed) || !isShutdown(err) {
		t.Errorf("call in flight during Close: %v, want ErrClosed and sdk.ErrPluginShutdown", err)
	}
	if testenv.Alive(pid) {
		t.Errorf("plugin %d still runs after Close", pid)
	}
	// SIGKILL takes effect when the process is next scheduled.
	waitFor(t, 2*time.Second, "grandchildren killed by Close", func() bool { return !testenv.Alive(second) && !testenv.Alive(secondPG) })
}

func TestKillWindow(t *testing.T) {
	checkLeaks(t)
	// The plugin stops serving when asked but does not exit.
	p := startPlugin(t, helperSpec(t, "serve", envLinger+"=1"), host.Options{Logger: slog.New(newLogSink()), KillWindow: 300 * time.Millisecond})
	pid := p.Status().PID
	// A child of its in a session of its own is killed with it: the plugin
	// still runs when it is killed, so its descendants can still be found.
	res, err := p.Call(context.Background(), sdk.CallRequest{Method: "spawnsid"}, nil)
	var spawned struct{ PID int }
	if err != nil || json.Unmarshal(res, &spawned) != nil || !testenv.Alive(spawned.PID) {
		t.Fatalf("spawnsid: %s, %v", res, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(spawned.PID, syscall.SIGKILL) })
	start := time.Now()
	_ = p.Close()
	d := time.Since(start)
	if d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("Close took %v, want about the 300ms kill window", d)
	}
	if testenv.Alive(pid) {
		t.Errorf("plugin %d still runs", pid)
	}
	waitFor(t, 2*time.Second, "the plugin's child in a session of its own killed", func() bool { return !testenv.Alive(spawned.PID) })
}

func TestManager(t *testing.T) {
	checkLeaks(t)
	opts := host.Options{Logger: slog.New(newLogSink())}
	m := host.NewManager(opts)
	ctx := context.Background()
	a := helperSpec(t, "serve")
	a.Name = "a"
	b := helperSpec(t, "serve")
	b.Name = "b"
	bad := helperSpec(t, "garbage")
	bad.Name = "bad"

	pa, err := m.Start(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, bad); !errors.Is(err, host.ErrHandshake) {
		t.Errorf("start bad: %v", err)
	}
	if _, err := m.Start(ctx, a); !errors.Is(err, host.ErrDuplicate) {
		t.Errorf("second start of a: %v, want ErrDuplicate", err)
	}
	if got, ok := m.Get("a"); !ok || got != pa {
		t.Errorf("Get(a) = %v, %v", got, ok)
	}
	if _, ok := m.Get("bad"); ok {
		t.Error("a failed start is kept")
	}
	var names []string
	var pids []int
	for _, p := range m.All() {
		names = append(names, p.Name())
		pids = append(pids, p.Status().PID)
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("All = %v", names)
	}

	// A start in progress when Close comes is aborted, not orphaned.
	slow := helperSpec(t, "hang")
	slow.Name = "slow"
	slowErr := make(chan error, 1)
	go func() {
		_, err := m.Start(ctx, slow)
		slowErr <- err
	}()
	time.Sleep(100 * time.Millisecond)

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-slowErr; err == nil {
		t.Error("start in progress during Close succeeded")
	}
	for _, pid := range pids {
		if testenv.Alive(pid) {
			t.Errorf("plugin %d still runs after Close", pid)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, a); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
	if len(m.All()) != 0 {
		t.Error("plugins left after Close")
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("hello", 0o755)
	write("world.sh", 0o755)
	write("README.md", 0o644)
	write(".hidden", 0o755)
	write("bad name", 0o755)
	write("hello.py", 0o755) // same name as hello
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if err := os.Symlink(exe, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}

	specs, errs := host.Discover([]string{dir, filepath.Join(dir, "nope")})
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if !filepath.IsAbs(s.Path) {
			t.Errorf("%s: path %q is not absolute", s.Name, s.Path)
		}
	}
	if want := []string{"hello", "linked", "world"}; !slices.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"README.md", "bad name", "hello.py", "nope"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors do not mention %s:\n%s", want, all)
		}
	}
	if len(errs) != 4 {
		t.Errorf("%d errors, want 4:\n%s", len(errs), all)
	}
	if !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, host.ErrNotExecutable) }) {
		t.Error("no ErrNotExecutable")
	}
}

// TestProtocolVersions runs the same calls against an executor built with
// this SDK (protocol 3: every call on the executor's side channel) and one built
// against an SDK that spoke only protocol 1 (a stream per call, no Calls
// method at all): the handshake settles on each one's version and both
// serve results, progress, errors and cancellation the same way.
func TestProtocolVersions(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		max        int // host.Options.MaxProtocol
		want       int
		calls      string
	}{
		{"serve", "serve", 0, sdk.ProtocolVersion, "socket"},
		{"serve, host offers up to 2", "serve", 2, 2, "stream"},
		{"v1", "v1", 0, 1, "stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			p := startPlugin(t, helperSpec(t, tc.mode), host.Options{Logger: slog.New(newLogSink()), MaxProtocol: tc.max})
			ctx := context.Background()
			if got := p.Status().Protocol; got != tc.want {
				t.Fatalf("negotiated protocol %d, want %d", got, tc.want)
			}
			if tc.calls == "socket" && runtime.GOOS != "linux" {
				tc.calls = "stream"
			}
			defer func() {
				if got := p.Status().Calls; got != tc.calls {
					t.Errorf("calls ride on %q, want %q", got, tc.calls)
				}
			}()
			if _, err := p.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "echo", Spec: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}

			// Concurrent calls, each must get its own answer.
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := fmt.Sprintf(`{"i":%d}`, i)
					res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(want)}, nil)
					if err != nil || string(res) != want {
						errs <- fmt.Errorf("call %d = %s, %v", i, res, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}

			// Sentinel errors cross either way.
			_, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "nope"}, nil)
			if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), "method nope") {
				t.Errorf("unknown method: %v, want ErrUnsupported naming it", err)
			}

			// Progress reaches the call before it is cancelled; the
			// cancellation reaches the executor (block returns), and the
			// connection keeps serving.
			rec := &progressRec{got: make(chan sdk.Progress, 1)}
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := p.Call(cctx, sdk.CallRequest{Source: "a", Method: "block"}, rec)
				done <- err
			}()
			select {
			case pr := <-rec.got:
				if pr.Message != "blocking" {
					t.Errorf("progress %+v", pr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no progress from the blocking call")
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled call: %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a cancelled call did not return")
			}
			res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`1`)}, nil)
			if err != nil || string(res) != "1" {
				t.Errorf("call after a cancellation = %s, %v", res, err)
			}
		})
	}
}

// progressRec is an sdk.Call that hands on the first progress report.
type progressRec struct {
	sdk.Call
	got chan sdk.Progress
}

func (r *progressRec) Progress(p sdk.Progress) error {
	select {
	case r.got <- p:
	default:
	}
	return nil
}
