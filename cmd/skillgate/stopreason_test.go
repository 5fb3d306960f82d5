package main

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// TestNamedStop: the gateway logs its context's cause as the reason it
// stops; a signal reads as its name (stopping reason=SIGTERM), not as
// "interrupted by terminated", and any other cause is kept.
func TestNamedStop(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{interrupted{syscall.SIGTERM}, "SIGTERM"},
		{interrupted{syscall.SIGINT}, "SIGINT"},
		{errors.New("start failed"), "start failed"},
	} {
		parent, cancel := context.WithCancelCause(context.Background())
		ctx, stop := namedStop(parent)
		cancel(tc.cause)
		<-ctx.Done()
		if got := context.Cause(ctx).Error(); got != tc.want {
			t.Errorf("cause %v: the gateway's stop reason reads %q; want %q", tc.cause, got, tc.want)
		}
		stop()
	}
}
