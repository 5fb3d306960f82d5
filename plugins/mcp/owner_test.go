package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// TestCallOwner covers a stdio upstream shared by several clients: nothing
// on the pipe ties a server request or a log message to the call that caused
// it, so they may reach a call only when every call in flight came from the
// same client. The faultserver's "mark" and "after" arguments order the
// calls across the processes.
func TestCallOwner(t *testing.T) {
	h := newHarness(t)
	h.load("shared", fault())
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	waitFile := func(name string) { testenv.WaitForFile(t, file(name), 20*time.Second, nil) }
	// sampler answers sampling requests and counts them.
	sampler := func(n *atomic.Int32, answer string) *sdktest.Recorder {
		return &sdktest.Recorder{RequestFunc: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			n.Add(1)
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"` + answer + `"},"model":"m"}`), nil
		}}
	}
	call := func(ctx context.Context, client, tool string, args map[string]any, rec *sdktest.Recorder) (json.RawMessage, error) {
		return h.c.Call(ctx, sdk.CallRequest{Source: "shared", Method: "tools/call", Client: client,
			Params: mustJSON(map[string]any{"name": tool, "arguments": args})}, rec)
	}
	// hangFrom starts a call that stays in flight until the returned
	// function cancels it, and waits until the upstream has it.
	hangFrom := func(client, mark string, rec *sdktest.Recorder) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = call(ctx, client, "hang", map[string]any{"mark": file(mark)}, rec)
		}()
		waitFile(mark)
		return func() { cancel(); <-done }
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("server request refused while another client's call runs", func(t *testing.T) {
		// a's call reaches the upstream first; b's starts while a's waits,
		// so b's is the latest call when a's sampling request comes.
		var asked, other atomic.Int32
		resc := make(chan json.RawMessage, 1)
		go func() {
			res, err := call(ctx, "client-a", "sample", map[string]any{"mark": file("a-running"), "after": file("release")}, sampler(&asked, "from a"))
			if err != nil {
				t.Errorf("sample: %v", err)
			}
			resc <- res
		}()
		waitFile("a-running")
		stop := hangFrom("client-b", "b-running", sampler(&other, "from b"))
		defer stop()
		if err := os.WriteFile(file("release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		res := text(t, <-resc)
		if other.Load() != 0 || asked.Load() != 0 {
			t.Fatalf("the sampling request reached a client (a %d, b %d); the upstream saw %s", asked.Load(), other.Load(), res)
		}
		if !strings.Contains(res, "calls of several clients") || !strings.Contains(res, `\"shared\"`) {
			t.Fatalf("the upstream's answer does not say why it was refused: %s", res)
		}
		if !strings.Contains(h.logs.String(), "upstream request refused") {
			t.Fatalf("the refusal is not in the executor's log")
		}
	})

	t.Run("server request answered while the same client's other call runs", func(t *testing.T) {
		var asked, other atomic.Int32
		stop := hangFrom("client-a", "a-running", sampler(&other, "client a"))
		defer stop()
		res, err := call(ctx, "client-a", "sample", map[string]any{"after": file("a-running")}, sampler(&asked, "client a"))
		if err != nil {
			t.Fatal(err)
		}
		// Both calls are client-a's, so whichever call gets the request,
		// the same client answers it.
		if got := text(t, res); !strings.Contains(got, `"text":"client a"`) || asked.Load()+other.Load() != 1 {
			t.Fatalf("upstream saw %s (asked %d + %d times)", got, asked.Load(), other.Load())
		}
	})

	t.Run("unknown clients are clients of their own", func(t *testing.T) {
		var a, b atomic.Int32
		stop := hangFrom("", "anon-running", sampler(&b, "b"))
		defer stop()
		res, err := call(ctx, "", "sample", map[string]any{"after": file("anon-running")}, sampler(&a, "a"))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); !strings.Contains(got, "calls of several clients") || a.Load()+b.Load() != 0 {
			t.Fatalf("upstream saw %s (a %d, b %d)", got, a.Load(), b.Load())
		}
	})

	t.Run("log message not forwarded while another client's call runs", func(t *testing.T) {
		other := &sdktest.Recorder{}
		stop := hangFrom("client-b", "b-running-2", other)
		defer stop()
		rec := &sdktest.Recorder{}
		if _, err := call(ctx, "client-a", "progress", map[string]any{"after": file("b-running-2")}, rec); err != nil {
			t.Fatal(err)
		}
		stop()
		// Progress carries the call's own token, so it still arrives.
		if len(rec.Progresses) != 3 {
			t.Fatalf("progress events = %+v", rec.Progresses)
		}
		if len(rec.Notifications) != 0 || len(other.Notifications) != 0 {
			t.Fatalf("the log message reached a client: a %+v, b %+v", rec.Notifications, other.Notifications)
		}
		if !strings.Contains(h.logs.String(), "upstream notification not forwarded") {
			t.Fatalf("the dropped message is not in the executor's log")
		}
	})

	t.Run("alone again, the call gets its own requests and messages", func(t *testing.T) {
		var n atomic.Int32
		res, err := call(ctx, "client-a", "sample", nil, sampler(&n, "mine"))
		if err != nil || !strings.Contains(text(t, res), `"text":"mine"`) || n.Load() != 1 {
			t.Fatalf("sample alone = %s, %v (asked %d)", res, err, n.Load())
		}
		rec := &sdktest.Recorder{}
		if _, err := call(ctx, "client-a", "progress", nil, rec); err != nil || len(rec.Notifications) != 1 {
			t.Fatalf("progress alone: %v, notifications %+v", err, rec.Notifications)
		}
	})
}
