package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// keeper is an executor whose calls misbehave on purpose: one keeps its
// sdk.Call after returning, one outlives the gateway's wait, some panic.
type keeper struct {
	kept    chan sdk.Call
	late    chan error    // what a CallTool made after the gateway stopped waiting returned
	gaveUp  chan struct{} // closed by the test once the gateway stopped waiting for "outlive"
	blocked chan struct{} // closed by the test to let "block" return
}

func newKeeper() *keeper {
	return &keeper{kept: make(chan sdk.Call, 1), late: make(chan error, 1), blocked: make(chan struct{}), gaveUp: make(chan struct{})}
}

func (*keeper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "keeper", Version: "1", Kinds: []string{"keeper"}}, nil
}

func (*keeper) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind == "panic" {
		panic("load exploded")
	}
	return sdk.Definitions{}, nil
}

func (*keeper) Unload(context.Context, string) error { panic(errors.New("unload exploded")) }

func (k *keeper) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &p)
	switch p.Name {
	case "keep":
		k.kept <- call
		return json.RawMessage(`{}`), nil
	case "outlive":
		// The gateway gives up on this call (its context ends), and the
		// executor calls back all the same, on a context of its own.
		<-ctx.Done()
		<-k.gaveUp
		_, err := call.CallTool(context.WithoutCancel(ctx), "other", nil)
		k.late <- err
		return nil, ctx.Err()
	case "block":
		_ = call.Progress(sdk.Progress{Progress: 1})
		<-k.blocked
		return json.RawMessage(`{"blocked":"done"}`), nil
	case "explode":
		var none []string
		return json.RawMessage(none[len(p.Name)]), nil // a runtime panic: index out of range
	}
	return json.RawMessage(`{"ok":true}`), nil
}

func tool(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"name":%q}`, name))
}

// eachProtocol runs f against a fresh keeper at every protocol version.
func eachProtocol(t *testing.T, f func(t *testing.T, k *keeper, c client)) {
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			k := newKeeper()
			f(t, k, start(t, k, nil, v))
		})
	}
}

func TestCallEnded(t *testing.T) {
	ctx := context.Background()
	eachProtocol(t, func(t *testing.T, k *keeper, c client) {
		t.Run("used after Call returned", func(t *testing.T) {
			rec := &sdktest.Recorder{
				CallToolFunc: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
					return json.RawMessage(`{}`), nil
				},
				RequestFunc: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
					return json.RawMessage(`{}`), nil
				},
			}
			if _, err := c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: tool("keep")}, rec); err != nil {
				t.Fatal(err)
			}
			call := <-k.kept
			_, toolErr := call.CallTool(ctx, "other", nil)
			_, reqErr := call.Request(ctx, "roots/list", nil)
			for name, err := range map[string]error{
				"Progress": call.Progress(sdk.Progress{Progress: 1}),
				"Notify":   call.Notify(sdk.Notification{Method: "notifications/message"}),
				"CallTool": toolErr,
				"Request":  reqErr,
			} {
				if !errors.Is(err, sdk.ErrCallEnded) || errors.Is(err, sdk.ErrUnknownSource) {
					t.Errorf("%s after Call returned: %v, want sdk.ErrCallEnded", name, err)
				}
			}
			if len(rec.Progresses) != 0 || len(rec.Notifications) != 0 {
				t.Errorf("the gateway got %d progress and %d notifications after the result", len(rec.Progresses), len(rec.Notifications))
			}
		})

		t.Run("used after the gateway stopped waiting", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			rec := &sdktest.Recorder{CallToolFunc: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{}`), nil
			}}
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err := c.Call(cctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: tool("outlive")}, rec)
			close(k.gaveUp)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v", err)
			}
			select {
			case err := <-k.late:
				if !errors.Is(err, sdk.ErrCallEnded) || errors.Is(err, sdk.ErrUnknownSource) {
					t.Errorf("CallTool after the gateway stopped waiting: %v, want sdk.ErrCallEnded", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the executor's call never ended")
			}
		})
	})
}

// captureStderr collects what the process writes to os.Stderr while f runs.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	var out strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&out, r)
	}()
	f()
	os.Stderr = old
	_ = w.Close()
	wg.Wait()
	_ = r.Close()
	return out.String()
}

func TestPanicFailsOneRequest(t *testing.T) {
	ctx := context.Background()
	eachProtocol(t, func(t *testing.T, k *keeper, c client) {
		// A call in flight while another one panics.
		inflight := make(chan error, 1)
		progressed := make(chan struct{})
		rec := &progressRecorder{first: progressed}
		go func() {
			res, err := c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: tool("block")}, rec)
			if err == nil && string(res) != `{"blocked":"done"}` {
				err = fmt.Errorf("result %s", res)
			}
			inflight <- err
		}()
		<-progressed

		var callErr, loadErr, unloadErr error
		logged := captureStderr(t, func() {
			_, callErr = c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: tool("explode")}, &sdktest.Recorder{})
			_, loadErr = c.Load(ctx, sdk.LoadRequest{Source: "b", Kind: "panic", Spec: json.RawMessage(`{}`)})
			unloadErr = c.Unload(ctx, "b")
		})
		var rpcErr *sdk.RPCError
		if callErr == nil || errors.As(callErr, &rpcErr) || errors.Is(callErr, sdk.ErrPluginShutdown) ||
			!strings.Contains(callErr.Error(), `panicked in tools/call of tool "explode" (source "a")`) ||
			!strings.Contains(callErr.Error(), "runtime error: index out of range [7] with length 0") {
			t.Errorf("panicking call: %v, want an internal error naming the tool and the panic", callErr)
		}
		if loadErr == nil || !strings.Contains(loadErr.Error(), `panicked in Load of source "b": load exploded`) {
			t.Errorf("panicking Load: %v", loadErr)
		}
		if unloadErr == nil || !strings.Contains(unloadErr.Error(), `panicked in Unload of source "b": unload exploded`) {
			t.Errorf("panicking Unload: %v", unloadErr)
		}
		for _, want := range []string{`"@level":"error"`, "executor panicked", `"request":"tools/call of tool \"explode\" (source \"a\")"`, "keeper).Call"} {
			if !strings.Contains(logged, want) {
				t.Errorf("stderr lacks %q:\n%s", want, logged)
			}
		}

		// The executor lives on: the call in flight finishes, new ones run.
		close(k.blocked)
		if err := <-inflight; err != nil {
			t.Errorf("call in flight during the panic: %v", err)
		}
		if res, err := c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: tool("fine")}, &sdktest.Recorder{}); err != nil || string(res) != `{"ok":true}` {
			t.Errorf("call after the panic: %s, %v", res, err)
		}
	})
}

// progressRecorder closes first on the first progress report.
type progressRecorder struct {
	sdktest.Recorder
	first chan struct{}
	once  sync.Once
}

func (r *progressRecorder) Progress(p sdk.Progress) error {
	r.once.Do(func() { close(r.first) })
	return r.Recorder.Progress(p)
}

func TestInfoValidate(t *testing.T) {
	for _, tc := range []struct {
		info sdk.Info
		want []string // in the error; none means valid
	}{
		{info: sdk.Info{Name: "hello", Kinds: []string{"hello", "hello-v2", "Hello_3"}}},
		{info: sdk.Info{Name: "hello"}, want: []string{"Info.Kinds is empty"}},
		{info: sdk.Info{Kinds: []string{"a"}}, want: []string{"Info.Name is empty"}},
		{info: sdk.Info{Name: "x", Kinds: []string{""}}, want: []string{`"" is not a valid kind`}},
		{info: sdk.Info{Name: "x", Kinds: []string{"a b", "a"}}, want: []string{`"a b" is not a valid kind`}},
		{info: sdk.Info{Name: "x", Kinds: []string{strings.Repeat("k", 65)}}, want: []string{"is not a valid kind"}},
		{info: sdk.Info{Name: "x", Kinds: []string{"a", "a"}}, want: []string{`"a" is listed twice`}},
		{info: sdk.Info{}, want: []string{"Info.Name is empty", "Info.Kinds is empty"}},
	} {
		err := tc.info.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v: %v, want valid", tc.info, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: valid, want %q", tc.info, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want it to say %q", tc.info, err, w)
			}
		}
	}
}

// TestRecorderAnswersAsTheGateway: an unset Recorder answers callbacks as
// the gateway does for a client without capabilities and an unknown tool.
func TestRecorderAnswersAsTheGateway(t *testing.T) {
	ctx := context.Background()
	rec := &sdktest.Recorder{}
	var rpcErr *sdk.RPCError
	if _, err := rec.CallTool(ctx, "nope", nil); !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeInvalidParams || !strings.Contains(err.Error(), "unknown tool: nope") {
		t.Errorf("CallTool: %v, want an *sdk.RPCError with sdk.CodeInvalidParams saying the tool is unknown, as the gateway answers", err)
	}
	// The executor sees the same across the connection, so that code
	// tested with the harness takes the branch it takes in production.
	c := sdktest.Start(t, &echo{cancelled: make(chan string, 1)}, nil)
	_, err := c.Call(ctx, sdk.CallRequest{Source: "a", Method: "calltool", Params: json.RawMessage(`{}`)}, &sdktest.Recorder{})
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeInvalidParams || !strings.Contains(rpcErr.Message, "unknown tool: other") {
		t.Errorf("an executor's CallTool of an unknown tool through a Recorder: %v, want an *sdk.RPCError with sdk.CodeInvalidParams", err)
	}
	if _, err := rec.Request(ctx, "sampling/createMessage", nil); !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeMethodNotFound {
		t.Errorf("Request: %v, want an *sdk.RPCError with sdk.CodeMethodNotFound", err)
	}
	if res, err := rec.Request(ctx, "roots/list", nil); err != nil || string(res) != `{"roots":[]}` {
		t.Errorf("roots/list: %s, %v, want no roots", res, err)
	}
}

// noKinds is an executor whose Info lists no kinds.
type noKinds struct{ *keeper }

func (noKinds) Info(context.Context) (sdk.Info, error) { return sdk.Info{Name: "nokinds"}, nil }

// fatalTB records a Fatalf instead of failing the test.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestStartRefusesInvalidInfo(t *testing.T) {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sdktest.Start(tb, noKinds{newKeeper()}, nil)
	}()
	<-done
	if !strings.Contains(tb.fatal, "Info.Kinds is empty") {
		t.Errorf("sdktest.Start of an executor without kinds: %q, want a failure saying Kinds is empty", tb.fatal)
	}
}
