package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// failer answers Load, Unload and Call of source S with failures[S], and
// blocks a Load of kind "hang" until release is closed, whatever its
// context says.
type failer struct {
	failures map[string]error
	release  chan struct{}
}

func (failer) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "failer", Kinds: []string{"failer", "hang"}}, nil
}

func (f failer) Load(_ context.Context, req sdk.LoadRequest) (sdk.Definitions, error) {
	if req.Kind == "hang" {
		<-f.release
	}
	return sdk.Definitions{}, f.failures[req.Source]
}

func (f failer) Unload(_ context.Context, source string) error { return f.failures[source] }

func (f failer) Call(_ context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	return nil, f.failures[req.Source]
}

// TestErrorMapping checks the table of docs/EXECUTORS.md ("Errors") for
// Load, Unload and Call at every protocol version, with the caller's
// context live: one mapping, whatever carries the error.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		sentinel error // what errors.Is must match on the gateway's side; nil: none
		not      error // what it must not match
		msg      string
	}{
		{"unknown source", fmt.Errorf("%w: %q", sdk.ErrUnknownSource, "x"), sdk.ErrUnknownSource, nil, `unknown source: "x"`},
		{"invalid spec", fmt.Errorf("%w: no file", sdk.ErrInvalidSpec), sdk.ErrInvalidSpec, nil, "invalid spec: no file"},
		{"unsupported", sdk.ErrUnsupported, sdk.ErrUnsupported, nil, "unsupported"},
		{"unavailable", fmt.Errorf("%w: warming up", sdk.ErrUnavailable), sdk.ErrUnavailable, nil, "source unavailable: warming up"},
		{"call ended", fmt.Errorf("%w: late", sdk.ErrCallEnded), sdk.ErrCallEnded, nil, "call ended: late"},
		// Canceled while the caller's context is live reads as a plugin
		// that is going away, never as the caller's own cancellation.
		{"canceled", context.Canceled, sdk.ErrPluginShutdown, context.Canceled, "executor plugin shut down: context canceled"},
		{"deadline", fmt.Errorf("backend: %w", context.DeadlineExceeded), context.DeadlineExceeded, nil, "backend: context deadline exceeded"},
		{"grpc NotFound", status.Error(codes.NotFound, "row 7 not found"), sdk.ErrUnknownSource, nil, "row 7 not found"},
		{"grpc Unavailable", status.Error(codes.Unavailable, "backend down"), sdk.ErrPluginShutdown, nil, "executor plugin shut down: backend down"},
		{"plain", errors.New("disk full"), nil, sdk.ErrPluginShutdown, "disk full"},
	}
	impl := failer{failures: make(map[string]error)}
	for _, tc := range cases {
		impl.failures[tc.name] = tc.err
	}
	ctx := context.Background()
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			c := start(t, impl, nil, v)
			for _, tc := range cases {
				_, loadErr := c.Load(ctx, sdk.LoadRequest{Source: tc.name, Kind: "failer"})
				unloadErr := c.Unload(ctx, tc.name)
				_, callErr := c.Call(ctx, sdk.CallRequest{Source: tc.name, Method: "tools/call"}, nil)
				for what, err := range map[string]error{"Load": loadErr, "Unload": unloadErr, "Call": callErr} {
					switch {
					case err == nil:
						t.Errorf("%s of %s: no error", what, tc.name)
					case tc.sentinel != nil && !errors.Is(err, tc.sentinel):
						t.Errorf("%s of %s: %v does not match %v", what, tc.name, err, tc.sentinel)
					case tc.not != nil && errors.Is(err, tc.not):
						t.Errorf("%s of %s: %v matches %v", what, tc.name, err, tc.not)
					case err.Error() != tc.msg:
						t.Errorf("%s of %s: message %q, want %q", what, tc.name, err, tc.msg)
					}
				}
			}
		})
	}
}

// TestDeadlineWording checks that a request whose deadline passed fails
// with the deadline's own error, not with whatever gRPC noticed first (a
// stream the executor's side reset when the deadline reached it there).
func TestDeadlineWording(t *testing.T) {
	impl := failer{failures: map[string]error{}, release: make(chan struct{})}
	t.Cleanup(func() { close(impl.release) })
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			c := start(t, impl, nil, v)
			for range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				_, err := c.Load(ctx, sdk.LoadRequest{Source: "s", Kind: "hang"})
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) || err.Error() != context.DeadlineExceeded.Error() {
					t.Fatalf("Load past its deadline: %q, want %q", err, context.DeadlineExceeded)
				}
			}
		})
	}
}
