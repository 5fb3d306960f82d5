package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestStartTimeout starts programs that are not MCP servers (the real
// `sleep`, and a shell that prints a banner on stdout and a line on stderr,
// then idles): Load gives up after the source's start_timeout and says what
// the program wrote and what to check, and a healthy source beside them
// loads and serves meanwhile.
func TestStartTimeout(t *testing.T) {
	h := newHarness(t)
	h.load("healthy", fault())
	for _, tc := range []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"silent", map[string]any{"command": "sleep", "args": []string{"100000"}, "start_timeout": "1s", "shutdown_grace": "1s"}, []string{
			`no answer to initialize within 1s (start_timeout): is "sleep" an MCP server that speaks JSON-RPC on its stdin and stdout?`,
			"It wrote nothing on stdout; it wrote nothing on stderr.",
			"raise start_timeout",
		}},
		{"banner", map[string]any{"command": "sh", "start_timeout": "1s", "shutdown_grace": "1s",
			"args": []string{"-c", `echo "Server listening on port 3000"; echo "booting the widget store" >&2; exec sleep 100000`}}, []string{
			`no answer to initialize within 1s (start_timeout): is "sh" an MCP server`,
			`It wrote on stdout "Server listening on port 3000", which is not JSON-RPC`,
			"last stderr: booting the widget store",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := h.c.Load(ctx, sdk.LoadRequest{Source: tc.name, Kind: Kind, Spec: mustJSON(tc.spec)})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v\nwant it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "context deadline exceeded") || strings.Contains(err.Error(), "upstream stopped") {
				t.Errorf("err = %v; want no internal words", err)
			}
			if got := text(t, h.mustCall("healthy", "echo", map[string]any{"text": "still here"}, nil)); got != "still here" {
				t.Fatalf("healthy echo = %q", got)
			}
		})
	}
}

func TestStartTimeoutDefaults(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want time.Duration
	}{
		{`{"command":"/usr/bin/node","args":["server.js"]}`, DefaultStartTimeout},
		{`{"url":"http://127.0.0.1:1/mcp"}`, DefaultStartTimeout},
		{`{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"]}`, SlowStartTimeout},
		{`{"command":"/usr/local/bin/uvx","args":["mcp-server-git"]}`, SlowStartTimeout},
		{`{"command":"docker","args":["run","-i","--rm","mcp/fetch"]}`, SlowStartTimeout},
		{`{"command":"npx","start_timeout":"5s"}`, 5 * time.Second},
	} {
		s, err := ParseSpec(json.RawMessage(tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.startTimeout(); got != tc.want {
			t.Errorf("%s: start timeout %s, want %s", tc.spec, got, tc.want)
		}
	}
	if _, err := ParseSpec(json.RawMessage(`{"command":"x","start_timeout":"-1s"}`)); err == nil || !strings.Contains(err.Error(), "start_timeout must not be negative") {
		t.Fatalf("negative start_timeout: %v", err)
	}
}

// TestFailureLoggedOnce: an upstream that keeps failing to restart the same
// way is logged once at warn level, not at every attempt; a failed Load,
// which its caller reports, only at debug level.
func TestFailureLoggedOnce(t *testing.T) {
	h := newHarness(t)
	marker := filepath.Join(t.TempDir(), "marker")
	h.load("loop", fault("-exit-if-exists", marker))
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _ = h.call("loop", "crash", nil, nil)
	h.waitChange(30*time.Second, "loop failing its fourth restart", func(ch sdk.Change) bool {
		return ch.Source == "loop" && ch.Status != nil && ch.Status.State == StateFailed && ch.Status.Restarts >= 4
	})
	logs := h.logs.String()
	failed := regexp.MustCompile(`(?m)^.*msg="upstream failed".*marker .* exists.*$`).FindAllString(logs, -1)
	var warned int
	for _, l := range failed {
		if strings.Contains(l, "level=WARN") {
			warned++
		}
	}
	if len(failed) < 3 || warned != 1 {
		t.Fatalf("%d failures logged, %d at warn level; want one at warn level, the rest at debug:\n%s", len(failed), warned, strings.Join(failed, "\n"))
	}
	if regexp.MustCompile(`level=(INFO|WARN) msg="upstream (starting|restarting)"`).MatchString(logs) {
		t.Fatalf("starts are logged above debug level:\n%s", logs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.c.Load(ctx, sdk.LoadRequest{Source: "broken", Kind: Kind, Spec: mustJSON(map[string]any{"command": "no-such-command-xyz"})}); err == nil {
		t.Fatal("Load of a missing command succeeded")
	}
	if l := regexp.MustCompile(`(?m)^.*source=broken.*$`).FindAllString(h.logs.String(), -1); len(l) == 0 || strings.Contains(strings.Join(l, "\n"), "level=WARN") || strings.Contains(strings.Join(l, "\n"), "level=INFO") {
		t.Fatalf("a failed Load is logged above debug level (its caller logs the error):\n%s", strings.Join(l, "\n"))
	}
}

// TestUnloadMidCall: a call in flight on a source that is unloaded fails
// saying so, not as if the upstream had failed.
func TestUnloadMidCall(t *testing.T) {
	h := newHarness(t)
	h.load("gone", fault())
	mark := filepath.Join(t.TempDir(), "arrived")
	done := make(chan error, 1)
	go func() {
		_, err := h.call("gone", "hang", map[string]any{"mark": mark}, nil)
		done <- err
	}()
	testenv.WaitForFile(t, mark, 30*time.Second, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.c.Unload(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !errors.Is(err, sdk.ErrUnavailable) || strings.Contains(err.Error(), "upstream stopped") ||
		!strings.Contains(err.Error(), `source "gone" was stopped while the call ran: the gateway unloaded it (a config reload removed it or changed its settings`) {
		t.Fatalf("err = %v; want it to say the source was unloaded", err)
	}
}

// TestLateAnswer: an answer to a request the executor gave up on is
// expected (the upstream was slower than the caller) and logged at debug
// level; an answer with an id never sent is logged at warn level. A crash
// names its signal.
func TestLateAnswer(t *testing.T) {
	h := newHarness(t)
	h.load("slow", fault())
	dir := t.TempDir()
	mark, after := filepath.Join(dir, "arrived"), filepath.Join(dir, "go")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.callCtx(ctx, "slow", "echo", map[string]any{"text": "late", "mark": mark, "after": after}, nil)
		done <- err
	}()
	testenv.WaitForFile(t, mark, 30*time.Second, nil)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	// The caller's call ends at once; the executor learns of the
	// cancellation a moment later. Only once it told the server (and so
	// no longer waits) is the answer a late one.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var ids []json.RawMessage
		_ = json.Unmarshal([]byte(text(t, h.mustCall("slow", "cancelled", nil, nil))), &ids)
		if len(ids) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the executor did not tell the server of the cancelled call:\n%s", h.logs.String())
		}
	}
	if err := os.WriteFile(after, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	lateRE := regexp.MustCompile(`(?m)^.*msg="upstream answered a request the gateway no longer waits for; ignored it".*$`)
	for deadline := time.Now().Add(20 * time.Second); !lateRE.MatchString(h.logs.String()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the late answer was not logged as one:\n%s", h.logs.String())
		}
	}
	if got := text(t, h.mustCall("slow", "garbage", nil, nil)); got != "survived garbage" {
		t.Fatalf("garbage = %q", got)
	}
	logs := h.logs.String()
	if !regexp.MustCompile(`level=WARN msg="upstream answered with an id it was never sent; ignored it".* id=987654`).MatchString(logs) {
		t.Fatalf("no warning for an id never sent:\n%s", logs)
	}
	if late := lateRE.FindAllString(logs, -1); len(late) != 1 || !strings.Contains(late[0], "level=DEBUG") {
		t.Fatalf("the late answer was logged as %q; want once at debug level", late)
	}
	_, err := h.call("slow", "crash", nil, nil)
	isUnavailable(t, err, "slow", "killed by signal 9 (SIGKILL)")
}
