package sdk

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// lateContext is a context whose deadline has passed while its timer has
// not marked it done yet: what a caller's context is for a moment when
// gRPC's own deadline timer fires first.
type lateContext struct{ context.Context }

func (lateContext) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

func TestDeadlinePassedBeforeContextDone(t *testing.T) {
	ctx := lateContext{context.Background()}
	// gRPC reports a stream the other side reset at its deadline so.
	reset := status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM with error code: CANCEL")
	for what, err := range map[string]error{
		"status":  fromStatus(ctx, reset),
		"failure": fromCode(ctx, codes.Canceled, "context canceled"),
	} {
		if !errors.Is(err, context.DeadlineExceeded) || err.Error() != context.DeadlineExceeded.Error() {
			t.Errorf("%s past the deadline: %q, want %q", what, err, context.DeadlineExceeded)
		}
	}
}
