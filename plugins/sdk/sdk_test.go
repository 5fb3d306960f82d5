package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/hostside"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// echo is a small executor used to exercise every part of the contract.
type echo struct {
	host      sdk.Host
	cancelled chan string // the ids of blocked calls whose context ended
}

func (e *echo) SetHost(h sdk.Host) { e.host = h }

func (e *echo) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "echo", Version: "0.1.0", Kinds: []string{"echo"}}, nil
}

func (e *echo) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind != "echo" {
		return sdk.Definitions{}, fmt.Errorf("%w: kind %q", sdk.ErrInvalidSpec, req.Kind)
	}
	return sdk.Definitions{Tools: []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"},"x-new":1}`)}}, nil
}

func (e *echo) Unload(_ context.Context, source string) error {
	return fmt.Errorf("%w: %s", sdk.ErrUnknownSource, source)
}

func (e *echo) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	switch req.Method {
	case "echo":
		return req.Params, nil
	case "client":
		return json.Marshal(req.Client)
	case "progress":
		for i := 1; i <= 3; i++ {
			if err := call.Progress(sdk.Progress{Progress: float64(i), Total: 3, Message: "step"}); err != nil {
				return nil, err
			}
		}
		_ = call.Notify(sdk.Notification{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"hi"}`)})
		return req.Params, nil
	case "calltool":
		return call.CallTool(ctx, "other", req.Params)
	case "sample":
		return call.Request(ctx, "sampling/createMessage", req.Params)
	case "rpcerror":
		return nil, &sdk.RPCError{Code: -32602, Message: "bad params", Data: json.RawMessage(`{"field":"x"}`)}
	case "block":
		<-ctx.Done()
		if e.cancelled != nil {
			e.cancelled <- req.CallID
		}
		return nil, ctx.Err()
	case "log":
		return json.RawMessage(`{}`), e.host.Log(ctx, "info", "hello", map[string]string{"k": "v"})
	}
	return nil, fmt.Errorf("%w: method %s", sdk.ErrUnsupported, req.Method)
}

type logHost struct{ got chan string }

func (h logHost) Log(_ context.Context, level, msg string, attrs map[string]string) error {
	h.got <- level + " " + msg + " " + attrs["k"]
	return nil
}

// client is the gateway's side of an executor: *sdktest.Client, or a
// *hostside.Client for the older protocol versions.
type client interface {
	sdk.Executor
	sdk.Watcher
	CallsChannel() (string, error)
	Version() int
}

// start serves impl at one protocol version over an in-memory connection.
func start(t testing.TB, impl sdk.Executor, host sdk.Host, version int) client {
	t.Helper()
	if version == sdk.ProtocolVersion {
		return sdktest.Start(t, impl, host) // what executor authors use
	}
	rpc, server := plugin.TestPluginGRPCConn(t, false, hostside.PluginSet(impl, host, version))
	t.Cleanup(func() {
		server.Stop()
		_ = rpc.Close()
	})
	raw, err := rpc.Dispense(hostside.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	c := raw.(*hostside.Client)
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestContract runs the whole contract at every protocol version: 1 (a
// stream per call), 2 (every call on one Calls stream) and 3 (every call
// on the executor's side channel, on Linux).
func TestContract(t *testing.T) {
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) { testContract(t, v) })
	}
}

func testContract(t *testing.T, version int) {
	ctx := context.Background()
	host := logHost{got: make(chan string, 1)}
	impl := &echo{cancelled: make(chan string, 1)}
	c := start(t, impl, host, version)
	if c.Version() != version {
		t.Fatalf("client speaks protocol %d, want %d", c.Version(), version)
	}
	wantChannel := "stream"
	if version >= 3 && runtime.GOOS == "linux" {
		wantChannel = "socket"
	}
	if ch, err := c.CallsChannel(); ch != wantChannel || err != nil {
		t.Fatalf("calls ride on %q (%v), want %q", ch, err, wantChannel)
	}
	defer func() {
		if ch, err := c.CallsChannel(); ch != wantChannel || err != nil {
			t.Errorf("after the contract, calls ride on %q (%v), want %q", ch, err, wantChannel)
		}
	}()

	info, err := c.Info(ctx)
	if err != nil || info.Name != "echo" || info.Kinds[0] != "echo" {
		t.Fatalf("Info = %+v, %v", info, err)
	}

	t.Run("load keeps raw json", func(t *testing.T) {
		defs, err := c.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(defs.Tools[0]); got != `{"name":"echo","inputSchema":{"type":"object"},"x-new":1}` {
			t.Fatalf("tool = %s", got)
		}
	})
	t.Run("sentinels cross the boundary", func(t *testing.T) {
		_, err := c.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "nope"})
		if !errors.Is(err, sdk.ErrInvalidSpec) || err.Error() != `invalid spec: kind "nope"` {
			t.Fatalf("err = %v", err)
		}
		if err := c.Unload(ctx, "zz"); !errors.Is(err, sdk.ErrUnknownSource) {
			t.Fatalf("unload err = %v", err)
		}
		_, err = c.Call(ctx, sdk.CallRequest{Method: "nope"}, &sdktest.Recorder{})
		if !errors.Is(err, sdk.ErrUnsupported) {
			t.Fatalf("call err = %v", err)
		}
	})
	t.Run("events arrive in order before the result", func(t *testing.T) {
		rec := &sdktest.Recorder{}
		res, err := c.Call(ctx, sdk.CallRequest{Method: "progress", Params: json.RawMessage(`{"a":1}`)}, rec)
		if err != nil || string(res) != `{"a":1}` {
			t.Fatalf("res = %s, %v", res, err)
		}
		if len(rec.Progresses) != 3 || rec.Progresses[2].Progress != 3 || rec.Progresses[2].Total != 3 {
			t.Fatalf("progress = %+v", rec.Progresses)
		}
		if len(rec.Notifications) != 1 || rec.Notifications[0].Method != "notifications/message" {
			t.Fatalf("notifications = %+v", rec.Notifications)
		}
	})
	t.Run("client key crosses the boundary", func(t *testing.T) {
		for _, key := range []string{"c1k2j3", ""} {
			res, err := c.Call(ctx, sdk.CallRequest{Method: "client", Client: key}, &sdktest.Recorder{})
			if want, _ := json.Marshal(key); err != nil || string(res) != string(want) {
				t.Fatalf("executor saw client %s, %v; want %s", res, err, want)
			}
		}
	})

	t.Run("rpc errors pass unchanged", func(t *testing.T) {
		_, err := c.Call(ctx, sdk.CallRequest{Method: "rpcerror"}, &sdktest.Recorder{})
		var rpcErr *sdk.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || string(rpcErr.Data) != `{"field":"x"}` {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("callbacks reach the calling call", func(t *testing.T) {
		rec := &sdktest.Recorder{
			CallToolFunc: func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(fmt.Sprintf(`{"tool":%q,"args":%s}`, name, args)), nil
			},
			RequestFunc: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
				return nil, &sdk.RPCError{Code: -1, Message: "user declined " + method}
			},
		}
		res, err := c.Call(ctx, sdk.CallRequest{Method: "calltool", Params: json.RawMessage(`{"q":1}`)}, rec)
		if err != nil || string(res) != `{"tool":"other","args":{"q":1}}` {
			t.Fatalf("calltool = %s, %v", res, err)
		}
		_, err = c.Call(ctx, sdk.CallRequest{Method: "sample"}, rec)
		var rpcErr *sdk.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Message != "user declined sampling/createMessage" {
			t.Fatalf("sample err = %v", err)
		}
	})
	t.Run("cancellation reaches the executor", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := c.Call(cctx, sdk.CallRequest{Method: "block", CallID: "blocker"}, &sdktest.Recorder{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		select {
		case id := <-impl.cancelled:
			if id != "blocker" {
				t.Errorf("cancelled call %q, want blocker", id)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the executor's call was never cancelled")
		}
	})
	t.Run("concurrent calls get their own results and events", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := &sdktest.Recorder{}
				want := fmt.Sprintf(`{"i":%d}`, i)
				res, err := c.Call(ctx, sdk.CallRequest{Method: "progress", Params: json.RawMessage(want)}, rec)
				if err != nil || string(res) != want {
					t.Errorf("call %d = %s, %v", i, res, err)
				}
				if len(rec.Progresses) != 3 || len(rec.Notifications) != 1 {
					t.Errorf("call %d: %d progress, %d notifications, want 3 and 1", i, len(rec.Progresses), len(rec.Notifications))
				}
			}()
		}
		wg.Wait()
	})
	t.Run("host log", func(t *testing.T) {
		if _, err := c.Call(ctx, sdk.CallRequest{Method: "log"}, &sdktest.Recorder{}); err != nil {
			t.Fatal(err)
		}
		if got := <-host.got; got != "info hello v" {
			t.Fatalf("log = %q", got)
		}
	})
}
