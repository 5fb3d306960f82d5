//go:build linux

package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// runs counts the lines of a runs file: how often a helper ran.
func runs(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// copyExe copies the test binary to dir, so that a test can change "the
// plugin's file" without touching the binary other tests run.
func copyExe(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, "plugin")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func gaveUpLogs(sink *logSink) int {
	n := 0
	for _, r := range sink.records() {
		if r.Level == slog.LevelError && strings.HasPrefix(r.Msg, "executor given up on") {
			n++
		}
	}
	return n
}

// TestGiveUp: the gateway retries a plugin that failed to start (the
// Manager's Start again and again, as a source's retry loop does). A file
// that cannot start is run once, or three times when its failure could be
// transient, then no more until it changes; the give-up is logged once.
func TestGiveUp(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		runs    int      // how often the file runs before the host gives up
		is      error    // what the error wraps besides ErrGaveUp
		mention []string // what the error says
	}{
		{mode: "garbage", runs: 1, is: host.ErrHandshake, mention: []string{"hello, I am not a plugin", "sdk.Serve"}},
		{mode: "future", runs: 1, is: host.ErrHandshake, mention: []string{"another executor protocol"}},
		{mode: "badcookie", runs: 1, is: host.ErrHandshake, mention: []string{"refused the gateway's magic cookie", "SKILLGATE_EXECUTOR_PLUGIN"}},
		{mode: "nokinds", runs: 1, is: host.ErrInvalidInfo, mention: []string{"Info.Kinds is empty", "fix the executor's Info"}},
		{mode: "exit", runs: 3, is: host.ErrHandshake, mention: []string{"boom: config missing", "3 failed starts in a row"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			checkLeaks(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "runs")
			spec := helperSpec(t, tc.mode, envRuns+"="+file)
			spec.Path = copyExe(t, dir)
			sink := newLogSink()
			sink.dumpOnFailure(t)
			m := host.NewManager(host.Options{Logger: slog.New(sink)})
			t.Cleanup(func() { _ = m.Close() })
			ctx := context.Background()

			var last error
			for i := range tc.runs + 3 {
				_, err := m.Start(ctx, spec)
				if err == nil {
					t.Fatal("Start succeeded")
				}
				if gaveUp := errors.Is(err, host.ErrGaveUp); gaveUp != (i+1 >= tc.runs) {
					t.Fatalf("start %d: %v; ErrGaveUp %v, want it from start %d on", i+1, err, gaveUp, tc.runs)
				}
				last = err
			}
			t.Logf("error: %v", last)
			if got := runs(t, file); got != tc.runs {
				t.Errorf("the file ran %d times, want %d", got, tc.runs)
			}
			if !errors.Is(last, tc.is) || !strings.Contains(last.Error(), spec.Path) || !strings.Contains(last.Error(), "not run again until it changes (a change is picked up at the next retry, up to 30 s later) or the gateway reloads its configuration (SIGHUP)") {
				t.Errorf("error %v, want %v naming %s and saying what to do", last, tc.is, spec.Path)
			}
			for _, m := range tc.mention {
				if !strings.Contains(last.Error(), m) {
					t.Errorf("error does not mention %q", m)
				}
			}
			if n := gaveUpLogs(sink); n != 1 {
				t.Errorf("%d give-up records at error level, want 1", n)
			}

			// A new version of the file is run again, and so is the
			// same one once the manager forgets the failures.
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(spec.Path, later, later); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Start(ctx, spec); err == nil || runs(t, file) != tc.runs+1 {
				t.Errorf("after the file changed: %v, %d runs, want %d", err, runs(t, file), tc.runs+1)
			}
			for range tc.runs {
				_, _ = m.Start(ctx, spec)
			}
			m.ForgetFailures()
			before := runs(t, file)
			if _, err := m.Start(ctx, spec); err == nil || errors.Is(err, host.ErrGaveUp) && tc.runs > 1 || runs(t, file) != before+1 {
				t.Errorf("after ForgetFailures: %v, %d runs, want %d", err, runs(t, file), before+1)
			}
		})
	}
}

// TestTransientStartFailure: a plugin whose first start fails (something
// it needs is not there yet) starts at the next try.
func TestTransientStartFailure(t *testing.T) {
	checkLeaks(t)
	m := host.NewManager(host.Options{Logger: slog.New(newLogSink())})
	t.Cleanup(func() { _ = m.Close() })
	spec := helperSpec(t, "flaky", envFlaky+"="+filepath.Join(t.TempDir(), "ready"))
	if _, err := m.Start(context.Background(), spec); err == nil || errors.Is(err, host.ErrGaveUp) {
		t.Fatalf("first start: %v, want a failure the host tries again", err)
	}
	if _, err := m.Start(context.Background(), spec); err != nil {
		t.Fatalf("second start: %v", err)
	}
}

// TestGiveUpAfterRestart: a plugin that ran is restarted whenever it goes
// down; when its file was replaced by one that cannot start, the host
// gives up on that file (state failed, no next restart, its sources
// failed) until the file changes again.
func TestGiveUpAfterRestart(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	exe, _ := os.Executable()
	link := filepath.Join(dir, "echo")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >>"+file+"\necho I am not a plugin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := helperSpec(t, "serve")
	spec.Path = link
	sink := newLogSink()
	sink.dumpOnFailure(t)
	p := startPlugin(t, spec, host.Options{Logger: slog.New(sink), MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	ctx := context.Background()
	got := watch(t, p)
	if _, err := p.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "echo"}); err != nil {
		t.Fatal(err)
	}

	replace := func(target string) {
		t.Helper()
		tmp := link + ".new"
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Fatal(err)
		}
	}
	replace(script)
	_, _ = p.Call(ctx, sdk.CallRequest{Source: "a", Method: "exit"}, nil)
	waitFor(t, 10*time.Second, "given up", func() bool {
		st := p.Status()
		return st.State == host.StateFailed && st.NextRestart.IsZero()
	})
	st := p.Status()
	if !strings.Contains(st.LastError, "I am not a plugin") || !strings.Contains(st.LastError, "not run again until it changes") ||
		!strings.Contains(st.LastError, "up to 30 s later") || !strings.Contains(st.LastError, "SIGHUP") {
		t.Errorf("Status = %+v, want LastError saying why, what to do and when it is retried", st)
	}
	// One launch of the script, one restart: the log counts it as the
	// status does.
	if st.Restarts != 1 {
		t.Errorf("Status.Restarts = %d after one failed restart, want 1", st.Restarts)
	}
	if got := restartCounts(sink); len(got) != 1 || got[0] != st.Restarts {
		t.Errorf("restart counts logged %v, want [%d] as Status.Restarts says", got, st.Restarts)
	}
	waitFor(t, 5*time.Second, "source a failed", func() bool {
		_, ok := got.find(func(ch sdk.Change) bool {
			return ch.Source == "a" && ch.Status != nil && ch.Status.State == "failed" && strings.Contains(ch.Status.LastError, "not run again")
		})
		return ok
	})
	time.Sleep(500 * time.Millisecond) // ten backoffs
	if n := runs(t, file); n != 1 {
		t.Errorf("the script ran %d times, want once", n)
	}
	if n := gaveUpLogs(sink); n != 1 {
		t.Errorf("%d give-up records at error level, want 1", n)
	}

	replace(exe)
	waitFor(t, 10*time.Second, "running again", func() bool { return p.Status().State == host.StateRunning })
	if res, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`1`)}, nil); err != nil || string(res) != "1" {
		t.Errorf("call after the file changed back: %s, %v", res, err)
	}
}

// restartCounts returns the restart count of each "executor restarting"
// record, in order.
func restartCounts(sink *logSink) []int {
	var n []int
	for _, r := range sink.records() {
		if r.Msg == "executor restarting" {
			v, _ := strconv.Atoi(fmt.Sprint(r.Attrs["restarts"]))
			n = append(n, v)
		}
	}
	return n
}

// TestPanicInCall: a panic in one call fails that call alone, in a real
// plugin process: the process, its other calls in flight and its sources
// live on, and the stack reaches the gateway's log.
func TestPanicInCall(t *testing.T) {
	checkLeaks(t)
	sink := newLogSink()
	sink.dumpOnFailure(t)
	p := startPlugin(t, helperSpec(t, "serve"), host.Options{Logger: slog.New(sink)})
	ctx := context.Background()
	pid := p.Status().PID

	call := &blockingCall{progressed: make(chan struct{})}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inflight := make(chan error, 1)
	go func() {
		_, err := p.Call(bctx, sdk.CallRequest{Source: "a", Method: "block"}, call)
		inflight <- err
	}()
	<-call.progressed

	_, err := p.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: json.RawMessage(`{"name":"explode"}`)}, nil)
	if err == nil || isShutdown(err) || !strings.Contains(err.Error(), `panicked in tools/call of tool "explode" (source "a"): kaboom`) {
		t.Fatalf("panicking call: %v, want an error naming the tool and the panic", err)
	}
	select {
	case err := <-inflight:
		t.Fatalf("the call in flight ended with the panic: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-inflight; !errors.Is(err, context.Canceled) {
		t.Errorf("call in flight: %v, want context.Canceled", err)
	}
	if st := p.Status(); st.PID != pid || st.State != host.StateRunning || st.Restarts != 0 {
		t.Errorf("Status = %+v, want the same process running", st)
	}
	waitFor(t, 5*time.Second, "the panic's stack in the log", func() bool {
		for _, r := range sink.records() {
			stack, _ := r.Attrs["stack"].(string)
			if r.Level == slog.LevelError && strings.Contains(r.Msg, "executor panicked") && strings.Contains(stack, "(*echo).Call") {
				return true
			}
		}
		return false
	})
}
