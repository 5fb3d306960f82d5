// Package sdktest runs an executor over a real gRPC connection inside a test
// process, so executor authors can test the contract without building a
// plugin binary.
//
//	func TestHello(t *testing.T) {
//		exec := sdktest.Start(t, hello{}, nil)
//		defs, err := exec.Load(t.Context(), sdk.LoadRequest{Source: "a", Kind: "hello", Spec: json.RawMessage(`{}`)})
//		...
//	}
//
// Start fails the test, as the gateway refuses the executor, when its Info
// answer is not valid (see [sdk.Info.Validate]).
package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Start serves impl over an in-memory go-plugin gRPC connection and returns
// the gateway's side of it, after calling Info as the gateway would. host
// may be nil. Everything is closed when the test ends.
func Start(t testing.TB, impl sdk.Executor, host sdk.Host) *sdk.Client {
	t.Helper()
	client, server := plugin.TestPluginGRPCConn(t, false, sdk.PluginSet(impl, host))
	t.Cleanup(func() {
		server.Stop()
		_ = client.Close()
	})
	raw, err := client.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("dispense executor: %v", err)
	}
	c := raw.(*sdk.Client)
	t.Cleanup(func() { _ = c.Close() })
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatalf("executor Info: %v", err)
	}
	if err := info.Validate(); err != nil {
		t.Fatalf("the gateway would refuse this executor: %v", err)
	}
	return c
}

// Recorder is a Call that records what the executor sent, for assertions.
// CallToolFunc and RequestFunc, when set, answer callbacks. Unset, they
// answer as the gateway does for a client that declared no capabilities
// and a catalog without the tool: Request answers roots/list with no
// roots and anything else with an *sdk.RPCError (sdk.CodeMethodNotFound),
// and CallTool fails with a plain error ("unknown tool: ...").
type Recorder struct {
	mu            sync.Mutex
	Progresses    []sdk.Progress
	Notifications []sdk.Notification

	CallToolFunc func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	RequestFunc  func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

var _ sdk.Call = (*Recorder)(nil)

// Progress implements sdk.Call.
func (r *Recorder) Progress(p sdk.Progress) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Progresses = append(r.Progresses, p)
	return nil
}

// Notify implements sdk.Call.
func (r *Recorder) Notify(n sdk.Notification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notifications = append(r.Notifications, n)
	return nil
}

// Request implements sdk.Call.
func (r *Recorder) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if r.RequestFunc == nil {
		if method == "roots/list" {
			return json.RawMessage(`{"roots":[]}`), nil
		}
		return nil, &sdk.RPCError{Code: sdk.CodeMethodNotFound,
			Message: fmt.Sprintf("the client did not declare the capability that %s needs (sdktest.Recorder without a RequestFunc)", method)}
	}
	return r.RequestFunc(ctx, method, params)
}

// CallTool implements sdk.Call.
func (r *Recorder) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if r.CallToolFunc == nil {
		return nil, fmt.Errorf("unknown tool: %s (sdktest.Recorder without a CallToolFunc)", name)
	}
	return r.CallToolFunc(ctx, name, args)
}
