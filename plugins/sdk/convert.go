package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

func toRaw(b [][]byte) []json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	out := make([]json.RawMessage, len(b))
	for i, v := range b {
		out[i] = v
	}
	return out
}

func fromRaw(r []json.RawMessage) [][]byte {
	if len(r) == 0 {
		return nil
	}
	out := make([][]byte, len(r))
	for i, v := range r {
		out[i] = v
	}
	return out
}

func defsToPB(d *Definitions) *pb.Definitions {
	if d == nil {
		return nil
	}
	return &pb.Definitions{
		Tools:             fromRaw(d.Tools),
		Resources:         fromRaw(d.Resources),
		ResourceTemplates: fromRaw(d.ResourceTemplates),
		Prompts:           fromRaw(d.Prompts),
		Server:            d.Server,
		Status:            statusToPB(d.Status),
	}
}

func defsFromPB(d *pb.Definitions) Definitions {
	if d == nil {
		return Definitions{}
	}
	return Definitions{
		Tools:             toRaw(d.Tools),
		Resources:         toRaw(d.Resources),
		ResourceTemplates: toRaw(d.ResourceTemplates),
		Prompts:           toRaw(d.Prompts),
		Server:            d.Server,
		Status:            statusFromPB(d.Status),
	}
}

func statusToPB(s *Status) *pb.Status {
	if s == nil {
		return nil
	}
	return &pb.Status{State: s.State, Pid: int64(s.PID), Restarts: int64(s.Restarts), LastError: s.LastError}
}

func statusFromPB(s *pb.Status) *Status {
	if s == nil {
		return nil
	}
	return &Status{State: s.State, PID: int(s.Pid), Restarts: int(s.Restarts), LastError: s.LastError}
}

func notificationToPB(n *Notification) *pb.Notification {
	if n == nil {
		return nil
	}
	return &pb.Notification{Method: n.Method, Params: n.Params}
}

func notificationFromPB(n *pb.Notification) *Notification {
	if n == nil {
		return nil
	}
	return &Notification{Method: n.Method, Params: n.Params}
}

// resultToPB turns a call's outcome into a Result message. Errors that are
// not JSON-RPC errors travel as gRPC status instead (second return).
func resultToPB(res json.RawMessage, err error) (*pb.Result, error) {
	if err == nil {
		if res == nil {
			res = json.RawMessage("{}")
		}
		return &pb.Result{Result: res}, nil
	}
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) {
		return &pb.Result{Error: &pb.RPCError{Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data}}, nil
	}
	return nil, toStatus(err)
}

// resultToFramePB is resultToPB for the Calls stream, where an error that
// is not a JSON-RPC error travels in the result as a Failure.
func resultToFramePB(res json.RawMessage, err error) *pb.Result {
	r, err := resultToPB(res, err)
	if err != nil {
		st, _ := status.FromError(err)
		return &pb.Result{Failure: &pb.Failure{Code: uint32(st.Code()), Message: st.Message()}}
	}
	return r
}

// resultFromPB turns a Result message back into a call's outcome; ctx is
// the caller's, as for fromCode.
func resultFromPB(ctx context.Context, r *pb.Result) (json.RawMessage, error) {
	if r == nil {
		return nil, &RPCError{Code: CodeInternalError, Message: "executor returned no result"}
	}
	if f := r.Failure; f != nil {
		return nil, fromCode(ctx, codes.Code(f.Code), f.Message)
	}
	if r.Error != nil {
		return nil, &RPCError{Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data}
	}
	return r.Result, nil
}

var sentinelCodes = []struct {
	err  error
	code codes.Code
}{
	{ErrUnknownSource, codes.NotFound},
	{ErrInvalidSpec, codes.InvalidArgument},
	{ErrUnsupported, codes.Unimplemented},
	{ErrUnavailable, codes.FailedPrecondition},
	{ErrCallEnded, codes.Aborted},
	{context.Canceled, codes.Canceled},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
}

// toStatus maps an error to a gRPC status, keeping the message.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	for _, s := range sentinelCodes {
		if errors.Is(err, s.err) {
			return status.Error(s.code, err.Error())
		}
	}
	return status.Error(codes.Unknown, err.Error())
}

// errorFromCode turns a status code and message that an executor's error
// was mapped to back into an error matching the same sentinel.
func errorFromCode(code codes.Code, msg string) error {
	for _, s := range sentinelCodes {
		if s.code == code {
			return &remoteError{msg: msg, sentinel: s.err}
		}
	}
	return errors.New(msg)
}

// remoteError carries the other side's message and matches the sentinel
// that its status code stands for.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// fromStatus maps a gRPC error back to the SDK's errors (see fromCode).
// An error that carries no status is returned as it is.
func fromStatus(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := callerErr(ctx); ctxErr != nil {
		return ctxErr
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return fromCode(ctx, st.Code(), st.Message())
}

// fromCode maps a status code and message from the other side to the
// SDK's errors: a unary RPC's status and a Failure on the Calls stream or
// the side channel go through it alike, so that every protocol version
// gives the caller the same error (the table in docs/EXECUTORS.md).
//
//   - The caller's context is done, or its deadline has passed: its own
//     error, whatever the code. gRPC's deadline timer can fire before the
//     context's does, and reports the stream it reset in words of its own.
//   - Unavailable and Canceled while the caller's context is live: the
//     other process went away, or is going away (an executor cancels its
//     calls as it shuts down), so ErrPluginShutdown. A caller that got
//     context.Canceled on a context it did not cancel would take it for
//     its own cancellation and answer nobody.
//   - Otherwise the sentinel the code stands for, if any, with the message.
func fromCode(ctx context.Context, code codes.Code, msg string) error {
	if err := callerErr(ctx); err != nil {
		return err
	}
	switch code {
	case codes.Unavailable, codes.Canceled:
		return &remoteError{msg: ErrPluginShutdown.Error() + ": " + msg, sentinel: ErrPluginShutdown}
	}
	return errorFromCode(code, msg)
}

// callerErr is ctx.Err(), or context.DeadlineExceeded once ctx's deadline
// has passed even if ctx's timer has not marked it done yet.
func callerErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
