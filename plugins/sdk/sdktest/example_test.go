package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
)

// upper is a small executor: each source offers the tool upper, which
// reports progress, logs through the Host and upper-cases its text.
type upper struct {
	host sdk.Host
}

func (u *upper) SetHost(h sdk.Host) { u.host = h }

func (*upper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "upper", Version: "1.0.0", Kinds: []string{"upper"}}, nil
}

func (*upper) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	tool := `{"name":"upper","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`
	return sdk.Definitions{Tools: []json.RawMessage{json.RawMessage(tool)}}, nil
}

func (*upper) Unload(context.Context, string) error { return nil }

func (u *upper) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	tc, err := sdk.ParseToolCall(req)
	if err != nil {
		return nil, err
	}
	if tc.Name != "upper" {
		return nil, sdk.UnknownTool(tc.Name)
	}
	var in struct {
		Text string `json:"text"`
	}
	if err := tc.DecodeArguments(&in); err != nil {
		return sdk.ErrorResult(err.Error()), nil
	}
	if err := call.Progress(sdk.Progress{Progress: 1, Total: 1, Message: "upper-casing"}); err != nil {
		return nil, err
	}
	if u.host != nil {
		_ = u.host.Log(ctx, "info", "upper called", map[string]string{"source": req.Source})
	}
	return sdk.TextResult(strings.ToUpper(in.Text)), nil
}

// Shutdown would stop what the executor started.
func (*upper) Shutdown(context.Context) error {
	fmt.Println("Shutdown called")
	return nil
}

// recordingHost is an sdk.Host that keeps what the executor logs. The
// harness calls it from its own goroutines, hence the lock.
type recordingHost struct {
	mu    sync.Mutex
	lines []string
}

func (h *recordingHost) Log(_ context.Context, level, msg string, attrs map[string]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf("%s %s source=%s", level, msg, attrs["source"]))
	return nil
}

func (h *recordingHost) logged() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

// exampleT stands in for the *testing.T that a test function gets and an
// Example does not: Start uses only the methods below. In a test, pass
// the test's t instead, and the testing package does what end does.
type exampleT struct {
	testing.TB // nil: not used
	cleanups   []func()
}

func (*exampleT) Helper()            {}
func (e *exampleT) Cleanup(f func()) { e.cleanups = append(e.cleanups, f) }
func (*exampleT) Errorf(format string, args ...any) {
	fmt.Printf("test failed: "+format+"\n", args...)
}
func (*exampleT) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("test failed: "+format, args...))
}

// end runs the cleanups, the last registered first, as a test's end does.
func (e *exampleT) end() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// Start serves an executor over a real gRPC connection, as the gateway
// would talk to its process. A Recorder takes the call's progress; a Host
// of the test's own receives what the executor logs.
func ExampleStart() {
	t := &exampleT{} // in a test: func TestUpper(t *testing.T) { ... }
	defer t.end()
	ctx := context.Background()

	host := &recordingHost{}
	c := sdktest.Start(t, &upper{}, host)
	if _, err := c.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "upper", Spec: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("Load: %v", err)
	}

	rec := &sdktest.Recorder{}
	res, err := c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call",
		Params: json.RawMessage(`{"name":"upper","arguments":{"text":"hello"}}`)}, rec)
	fmt.Println(string(res), err)
	fmt.Printf("%+v\n", rec.Progresses)
	fmt.Println(host.logged())

	// Errors arrive as the gateway sees them.
	_, err = c.Call(ctx, sdk.CallRequest{Source: "a", Method: "tools/call", Params: json.RawMessage(`{"name":"lower"}`)}, rec)
	var rpcErr *sdk.RPCError
	fmt.Println(errors.As(err, &rpcErr), err)
	// Output:
	// {"content":[{"type":"text","text":"HELLO"}]} <nil>
	// [{Progress:1 Total:1 Message:upper-casing}]
	// [info upper called source=a]
	// true rpc error -32602: unknown tool "lower"
}

// Protocol serves the executor at an older protocol version, as a gateway
// that speaks no newer one would; CallShutdown calls its Shutdown when the
// test ends, as sdk.Serve does when the gateway stops the plugin.
func ExampleProtocol() {
	t := &exampleT{}
	c := sdktest.Start(t, &upper{}, nil, sdktest.Protocol(1), sdktest.CallShutdown())
	res, err := c.Call(context.Background(), sdk.CallRequest{Source: "a", Method: "tools/call",
		Params: json.RawMessage(`{"name":"upper","arguments":{"text":"over protocol 1"}}`)}, nil)
	fmt.Println(c.Version(), string(res), err)
	t.end()
	// Output:
	// 1 {"content":[{"type":"text","text":"OVER PROTOCOL 1"}]} <nil>
	// Shutdown called
}
