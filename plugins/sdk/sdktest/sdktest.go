// Package sdktest runs an executor over a real gRPC connection inside a test
// process, so executor authors can test the contract without building a
// plugin binary.
//
//	func TestHello(t *testing.T) {
//		exec := sdktest.Start(t, hello{}, nil)
//		defs, err := exec.Load(ctx, sdk.LoadRequest{Source: "a", Kind: "hello"})
//		...
//	}
package sdktest

import (
	"context"
	"encoding/json"
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
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatalf("executor Info: %v", err)
	}
	return c
}

// Recorder is a Call that records what the executor sent, for assertions.
// CallToolFunc and RequestFunc, when set, answer callbacks.
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
		return nil, sdk.ErrUnsupported
	}
	return r.RequestFunc(ctx, method, params)
}

// CallTool implements sdk.Call.
func (r *Recorder) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if r.CallToolFunc == nil {
		return nil, sdk.ErrUnsupported
	}
	return r.CallToolFunc(ctx, name, args)
}
