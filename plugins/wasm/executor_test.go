package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

func TestInfo(t *testing.T) {
	info, err := New().Info(t.Context())
	if err != nil || info.Name != "wasm" || info.Version == "" || len(info.Kinds) != 1 || info.Kinds[0] != Kind {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestCommand(t *testing.T) {
	c, _ := startExec(t)
	defs := load(t, c, "cmd", toolFolder(t, StyleCommand, map[string]any{"title": "Guest", "annotations": map[string]any{"readOnlyHint": true}}))
	var def map[string]any
	if len(defs.Tools) != 1 || json.Unmarshal(defs.Tools[0], &def) != nil {
		t.Fatalf("tools = %s", defs.Tools)
	}
	if def["name"] != "guest" || def["title"] != "Guest" || def["inputSchema"] == nil || def["annotations"] == nil {
		t.Errorf("definition = %s", defs.Tools[0])
	}
	if defs.Status == nil || defs.Status.State != sdk.StateReady {
		t.Errorf("status = %+v", defs.Status)
	}

	t.Run("JSON object is structured content", func(t *testing.T) {
		r, _ := call(t, c, "cmd", `{"op":"echo","text":"héllo"}`)
		if r.IsError || r.status() != StatusOK || r.StructuredContent["echo"] != "héllo" || !strings.Contains(r.text(), `"echo":"héllo"`) {
			t.Fatalf("result = %+v", r)
		}
	})
	t.Run("other output is text", func(t *testing.T) {
		for _, text := range []string{"plain words", "[1,2,3]", `{"cut":`} {
			r, _ := call(t, c, "cmd", `{"op":"text","text":`+quote(text)+`}`)
			if r.IsError || r.StructuredContent != nil || r.text() != text {
				t.Errorf("text %q: result = %+v", text, r)
			}
		}
	})
	t.Run("no output is empty content", func(t *testing.T) {
		r, _ := call(t, c, "cmd", `{"op":"text"}`)
		if r.IsError || len(r.Content) != 0 || r.StructuredContent != nil {
			t.Fatalf("result = %+v", r)
		}
	})
	t.Run("stderr lines are progress and log", func(t *testing.T) {
		r, rec := call(t, c, "cmd", `{"op":"progress","n":3}`)
		if r.IsError || r.StructuredContent["steps"] != 3.0 {
			t.Fatalf("result = %+v", r)
		}
		checkProgress(t, rec, 3)
		checkLog(t, rec, "plain log line")
	})
	t.Run("stderr lines past the limit are counted", func(t *testing.T) {
		r, rec := call(t, c, "cmd", `{"op":"progress","n":1100}`)
		if r.IsError || len(rec.Progresses) != maxNotices {
			t.Fatalf("result = %+v, %d progress reports", r, len(rec.Progresses))
		}
		checkLogContains(t, rec, "101 more stderr lines were not forwarded")
	})
	t.Run("non-zero exit is an error result", func(t *testing.T) {
		r, _ := call(t, c, "cmd", `{"op":"fail"}`)
		text := r.text()
		if !r.IsError || r.status() != StatusError {
			t.Fatalf("result = %+v", r)
		}
		for _, want := range []string{"error: guest exited with code 3", "partial output", "log line 0\n", "log line 9\n", "[... 21 lines ...]", "log line 31", "log line 49", "something broke"} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "log line 10\n") || strings.Contains(text, "log line 30\n") {
			t.Errorf("text holds more than the start and end of stderr:\n%s", text)
		}
	})
	t.Run("panic is an error result", func(t *testing.T) {
		r, _ := call(t, c, "cmd", `{"op":"panic"}`)
		if !r.IsError || r.status() != StatusError || !strings.Contains(r.text(), "guest panic") {
			t.Fatalf("result = %+v", r)
		}
	})
	t.Run("missing arguments are an empty object", func(t *testing.T) {
		rec := &sdktest.Recorder{}
		raw, err := c.Call(t.Context(), sdk.CallRequest{Source: "cmd", Method: "tools/call", Params: json.RawMessage(`{"name":"guest"}`)}, rec)
		if err != nil || !strings.Contains(string(raw), `unknown op \"\"`) {
			t.Fatalf("call = %s, %v", raw, err)
		}
	})
}

func TestReactor(t *testing.T) {
	c, _ := startExec(t, WithMaxInstances(1))
	load(t, c, "re", toolFolder(t, StyleReactor, nil))

	var id string
	for i := 1; i <= 3; i++ {
		r, _ := call(t, c, "re", `{"op":"echo","text":"hi"}`)
		if r.IsError || r.StructuredContent["echo"] != "hi" || r.StructuredContent["calls"] != float64(i) {
			t.Fatalf("call %d: result = %+v (a warm instance counts its calls)", i, r)
		}
		id = r.StructuredContent["id"].(string)
	}
	r, rec := call(t, c, "re", `{"op":"progress","n":4}`)
	if r.IsError {
		t.Fatalf("result = %+v", r)
	}
	checkProgress(t, rec, 4)

	r, _ = call(t, c, "re", `{"op":"fail"}`)
	if !r.IsError || r.status() != StatusError || !strings.Contains(r.text(), "run returned 7") || !strings.Contains(r.text(), "reactor failure") {
		t.Fatalf("fail: result = %+v", r)
	}
	r, _ = call(t, c, "re", `{"op":"echo"}`)
	if r.StructuredContent["id"] != id || r.StructuredContent["calls"] != 6.0 {
		t.Fatalf("after a failed call the instance is kept: %+v", r)
	}

	r, _ = call(t, c, "re", `{"op":"panic"}`)
	if !r.IsError || !strings.Contains(r.text(), "reactor panic") {
		t.Fatalf("panic: result = %+v", r)
	}
	r, _ = call(t, c, "re", `{"op":"echo"}`)
	if r.IsError || r.StructuredContent["id"] == id || r.StructuredContent["calls"] != 1.0 {
		t.Fatalf("after a panic a fresh instance serves: %+v", r)
	}
}

func TestTimeout(t *testing.T) {
	c, _ := startExec(t)
	for _, style := range []string{StyleCommand, StyleReactor} {
		t.Run(style, func(t *testing.T) {
			load(t, c, style, toolFolder(t, style, map[string]any{"timeout": "1s"}))
			start := time.Now()
			r, _ := call(t, c, style, `{"op":"loop"}`)
			t.Logf("infinite loop stopped after %v", time.Since(start).Round(time.Millisecond))
			if !r.IsError || r.status() != StatusTimeout || !strings.Contains(r.text(), "1s timeout") {
				t.Fatalf("result = %+v", r)
			}
			if style == StyleCommand && !strings.Contains(r.text(), "looping forever") {
				t.Errorf("the stderr written before the timeout is lost: %s", r.text())
			}
			r, _ = call(t, c, style, `{"op":"echo","text":"after"}`)
			if r.IsError || r.StructuredContent["echo"] != "after" {
				t.Fatalf("call after a timeout: %+v", r)
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	c, _ := startExec(t)
	for _, style := range []string{StyleCommand, StyleReactor} {
		t.Run(style, func(t *testing.T) {
			load(t, c, style, toolFolder(t, style, map[string]any{"wasm": map[string]any{"memory_limit": "48MiB"}}))
			r, _ := call(t, c, style, `{"op":"bomb"}`)
			if !r.IsError || r.status() != StatusMemoryLimit || !strings.Contains(r.text(), "48MiB memory limit") ||
				(style == StyleCommand && !strings.Contains(r.text(), "fatal error: out of memory")) {
				t.Fatalf("result = %+v", r)
			}
			r, _ = call(t, c, style, `{"op":"echo","text":"after"}`)
			if r.IsError || r.StructuredContent["echo"] != "after" {
				t.Fatalf("call after the bomb: %+v", r)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "cmd", toolFolder(t, StyleCommand, nil))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, toolCall("cmd", "guest", `{"op":"loop"}`), &sdktest.Recorder{})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Fatalf("call cancelled by its client: %v", err)
	}
}

func TestIsolation(t *testing.T) {
	environ := func(k string) (string, bool) {
		v, ok := map[string]string{"GRANTED": "yes", "SKILLGATE_TOKEN": "s3cret", "OTHER": "no"}[k]
		return v, ok
	}
	c, _ := startExec(t, WithEnviron(environ))

	t.Run("nothing by default", func(t *testing.T) {
		spec := toolFolder(t, StyleCommand, nil)
		load(t, c, "bare", spec)
		for _, path := range []string{"/etc/hostname", "module.wasm", "/module.wasm", toolDir(t, spec) + "/module.wasm"} {
			r, _ := call(t, c, "bare", `{"op":"read","path":`+quote(path)+`}`)
			if r.StructuredContent["error"] == nil {
				t.Errorf("read %s without a mount: %+v", path, r.StructuredContent)
			}
		}
		r, _ := call(t, c, "bare", `{"op":"env","name":"GRANTED"}`)
		if r.StructuredContent["set"] != false || len(r.StructuredContent["all"].([]any)) != 0 {
			t.Errorf("environment without a grant: %+v", r.StructuredContent)
		}
		re := toolFolder(t, StyleReactor, nil)
		load(t, c, "bare-reactor", re)
		r, _ = call(t, c, "bare-reactor", `{"op":"env"}`)
		if len(r.StructuredContent["all"].([]any)) != 0 {
			t.Errorf("reactor environment without a grant: %+v", r.StructuredContent)
		}
	})

	t.Run("granted mounts and env", func(t *testing.T) {
		outside := t.TempDir()
		writeFile(t, filepath.Join(outside, "abs.txt"), "absolute mount")
		spec := toolFolder(t, StyleCommand, map[string]any{
			"env":     []string{"GRANTED", "MISSING"},
			"secrets": []string{"SKILLGATE_TOKEN"},
			"wasm": map[string]any{
				"env":    map[string]string{"LITERAL": "value"},
				"mounts": []map[string]string{{"path": "data"}, {"path": outside, "at": "/abs"}},
			},
		}, func(dir string) {
			writeFile(t, filepath.Join(dir, "data", "hello.txt"), "hello from the tool folder")
			writeFile(t, filepath.Join(dir, "secret.txt"), "not mounted")
			if err := os.Symlink("/etc/hostname", filepath.Join(dir, "data", "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../secret.txt", filepath.Join(dir, "data", "uplink")); err != nil {
				t.Fatal(err)
			}
		})
		dir := toolDir(t, spec)
		load(t, c, "granted", spec)

		for path, want := range map[string]string{"/data/hello.txt": "hello from the tool folder", "/abs/abs.txt": "absolute mount"} {
			r, _ := call(t, c, "granted", `{"op":"read","path":`+quote(path)+`}`)
			if r.StructuredContent["content"] != want {
				t.Errorf("read %s: %+v", path, r.StructuredContent)
			}
		}
		for _, path := range []string{"/data/../secret.txt", "/data/link", "/data/uplink", "/secret.txt", "/etc/hostname"} {
			r, _ := call(t, c, "granted", `{"op":"read","path":`+quote(path)+`}`)
			if r.StructuredContent["error"] == nil {
				t.Errorf("read %s escaped the mount: %+v", path, r.StructuredContent)
			}
		}
		for _, path := range []string{"/data/new.txt", "/data/hello.txt", "/abs/new.txt"} {
			r, _ := call(t, c, "granted", `{"op":"write","path":`+quote(path)+`}`)
			if r.StructuredContent["error"] == nil {
				t.Errorf("write %s to a read-only mount: %+v", path, r.StructuredContent)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "data", "hello.txt")); string(b) != "hello from the tool folder" {
			t.Errorf("hello.txt was changed: %q", b)
		}
		for _, p := range []string{filepath.Join(dir, "data", "new.txt"), filepath.Join(outside, "new.txt")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s was created", p)
			}
		}

		r, _ := call(t, c, "granted", `{"op":"env","name":"GRANTED"}`)
		all := map[string]bool{}
		for _, kv := range r.StructuredContent["all"].([]any) {
			all[kv.(string)] = true
		}
		want := map[string]bool{"GRANTED=yes": true, "SKILLGATE_TOKEN=s3cret": true, "LITERAL=value": true}
		if len(all) != len(want) || !all["GRANTED=yes"] || !all["SKILLGATE_TOKEN=s3cret"] || !all["LITERAL=value"] {
			t.Errorf("environment = %v, want exactly %v", all, want)
		}
	})
}

func TestClockAndRandom(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "cmd", toolFolder(t, StyleCommand, nil))
	load(t, c, "re", toolFolder(t, StyleReactor, nil))

	for _, source := range []string{"cmd", "re"} {
		r, _ := call(t, c, source, `{"op":"clock"}`)
		guestNow := time.Unix(0, int64(r.StructuredContent["unix_nano"].(float64)))
		if d := time.Since(guestNow); d < -time.Minute || d > time.Minute {
			t.Errorf("%s: guest clock says %v, host %v", source, guestNow, time.Now())
		}
	}
	// wazero's default clock advances 1ms per reading and its sleep returns
	// at once; the real ones let 20ms of sleep take 20ms.
	r, _ := call(t, c, "cmd", `{"op":"clock"}`)
	if slept := time.Duration(r.StructuredContent["slept_ns"].(float64)); slept < 20*time.Millisecond {
		t.Errorf("time.Sleep(20ms) in the guest took %v by its clock", slept)
	}
	// wazero's default random source is a fixed seed: every instance would
	// draw the same bytes.
	seen := map[string]bool{}
	for _, source := range []string{"cmd", "cmd", "re", "re"} {
		r, _ := call(t, c, source, `{"op":"rand"}`)
		v := r.StructuredContent["rand"].(string)
		if seen[v] {
			t.Errorf("%s: random bytes %s came twice", source, v)
		}
		seen[v] = true
	}
}

func TestReactorConcurrent(t *testing.T) {
	const max, calls = 3, 12
	c, _ := startExec(t, WithMaxInstances(max))
	load(t, c, "re", toolFolder(t, StyleReactor, nil))

	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			r, _ := call(t, c, "re", `{"op":"sleep","n":150}`)
			if r.IsError || r.StructuredContent["slept_ms"] != 150.0 {
				t.Errorf("call %d: %+v", i, r)
				return
			}
			mu.Lock()
			ids[r.StructuredContent["id"].(string)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ids) < 2 || len(ids) > max {
		t.Errorf("calls ran on %d instances (%v), want 2 to %d", len(ids), ids, max)
	}

	// limits.concurrency caps a tool's instances too.
	load(t, c, "one", toolFolder(t, StyleReactor, map[string]any{"limits": map[string]any{"concurrency": 1}}))
	ids = map[string]int{}
	for range 4 {
		wg.Go(func() {
			r, _ := call(t, c, "one", `{"op":"sleep","n":20}`)
			mu.Lock()
			ids[r.StructuredContent["id"].(string)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ids) != 1 {
		t.Errorf("limits.concurrency 1: calls ran on %d instances", len(ids))
	}
}

func TestOutputCap(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "cmd", toolFolder(t, StyleCommand, map[string]any{"limits": map[string]any{"output_cap": 100}}))
	r, _ := call(t, c, "cmd", `{"op":"text","text":"`+strings.Repeat("x", 5000)+`"}`)
	if r.IsError || r.StructuredContent != nil || !strings.HasPrefix(r.text(), strings.Repeat("x", 100)+"\n[output cut: 4900 more bytes") {
		t.Fatalf("result = %+v", r)
	}
}

func TestCallErrors(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "cmd", toolFolder(t, StyleCommand, nil))
	rec := &sdktest.Recorder{}

	if _, err := c.Call(t.Context(), toolCall("nope", "guest", `{}`), rec); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Errorf("unknown source: %v", err)
	}
	var rpc *sdk.RPCError
	_, err := c.Call(t.Context(), toolCall("cmd", "other", `{}`), rec)
	if !errors.As(err, &rpc) || rpc.Code != sdk.CodeInvalidParams {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = c.Call(t.Context(), sdk.CallRequest{Source: "cmd", Method: "prompts/get", Params: json.RawMessage(`{}`)}, rec)
	if !errors.As(err, &rpc) || rpc.Code != sdk.CodeMethodNotFound {
		t.Errorf("prompts/get: %v", err)
	}
}

func TestUnloadAndReload(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "re", toolFolder(t, StyleReactor, nil))

	// A call in flight when its source is reloaded finishes on the old module.
	done := make(chan string, 1)
	running := newStartedCall()
	go func() {
		raw, err := c.Call(t.Context(), toolCall("re", "guest", `{"op":"sleep","n":500}`), running)
		done <- fmt.Sprint(string(raw), err)
	}()
	running.wait(t)
	defs := load(t, c, "re", toolFolder(t, StyleReactor, map[string]any{"name": "renamed"}))
	if !strings.Contains(string(defs.Tools[0]), `"renamed"`) {
		t.Fatalf("reloaded definitions: %s", defs.Tools[0])
	}
	if r := <-done; !strings.Contains(r, `"slept_ms":500`) || strings.Contains(r, "isError") {
		t.Fatalf("call in flight during a reload: %s", r)
	}
	raw, err := c.Call(t.Context(), toolCall("re", "renamed", `{"op":"echo","text":"new"}`), &sdktest.Recorder{})
	if err != nil || !strings.Contains(string(raw), `"echo":"new"`) {
		t.Fatalf("call after reload: %s, %v", raw, err)
	}

	if err := c.Unload(t.Context(), "re"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(t.Context(), toolCall("re", "renamed", `{}`), &sdktest.Recorder{}); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Errorf("call after unload: %v", err)
	}
	if err := c.Unload(t.Context(), "re"); !errors.Is(err, sdk.ErrUnknownSource) {
		t.Errorf("second unload: %v", err)
	}
}

func TestClose(t *testing.T) {
	e := New(WithLogger(quietLogger()), WithCacheDir(cacheDir))
	c := sdktest.Start(t, e, nil)
	load(t, c, "re", toolFolder(t, StyleReactor, nil))
	load(t, c, "cmd", toolFolder(t, StyleCommand, nil))

	// Calls in flight stop, and say why.
	errs := make(chan error, 2)
	for _, source := range []string{"re", "cmd"} {
		running := newStartedCall()
		go func() {
			_, err := c.Call(t.Context(), toolCall(source, "guest", `{"op":"loop"}`), running)
			errs <- err
		}()
		running.wait(t)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, sdk.ErrUnavailable) || !strings.Contains(err.Error(), "unloaded") {
			t.Errorf("call during Close: %v", err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := c.Load(t.Context(), sdk.LoadRequest{Source: "x", Kind: Kind, Spec: toolFolder(t, StyleCommand, nil)})
	if !errors.Is(err, sdk.ErrUnavailable) {
		t.Fatalf("Load after Close: %v", err)
	}
}

func checkProgress(t *testing.T, rec *sdktest.Recorder, n int) {
	t.Helper()
	if len(rec.Progresses) != n {
		t.Fatalf("progress = %+v, want %d reports", rec.Progresses, n)
	}
	for i, p := range rec.Progresses {
		if p.Progress != float64(i+1) || p.Total != float64(n) {
			t.Errorf("progress %d = %+v", i, p)
		}
	}
}

func checkLog(t *testing.T, rec *sdktest.Recorder, line string) {
	t.Helper()
	for _, n := range rec.Notifications {
		var p struct {
			Level, Logger string
			Data          any
		}
		if n.Method == "notifications/message" && json.Unmarshal(n.Params, &p) == nil && p.Data == line {
			if p.Level != "info" || p.Logger != "guest" {
				t.Errorf("log message = %s", n.Params)
			}
			return
		}
	}
	t.Errorf("no log message %q in %+v", line, rec.Notifications)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func toolDir(t testing.TB, spec json.RawMessage) string {
	t.Helper()
	var s struct{ Dir string }
	if err := json.Unmarshal(spec, &s); err != nil {
		t.Fatal(err)
	}
	return s.Dir
}
