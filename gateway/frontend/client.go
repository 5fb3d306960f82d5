package frontend

import (
	"context"
	"hash/maphash"
	"strconv"
)

// clientKey is the context key under which a request carries the id of the
// client it came from.
type clientKey struct{}

// clientSeed keys ClientOf's hash: fixed for the process, unknown outside it.
var clientSeed = maphash.MakeSeed()

// withClient records that ctx's request came from the client id: a legacy
// session's id, or stdioSession.
func withClient(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientKey{}, id)
}

// clientLifeKey is the context key under which a request of the stdio
// client carries the context of its connection, which ends when the
// client goes.
type clientLifeKey struct{}

// clientLife returns the context a call that outlives its request (a
// 2026-07-28 round trip parked for its client's retry) runs on: the stdio
// connection's, which carries the client and ends with it, or for an HTTP
// request a context of its own, which carries no client (a 2026-07-28
// request over HTTP is a client of its own).
func clientLife(from context.Context) context.Context {
	if life, ok := from.Value(clientLifeKey{}).(context.Context); ok {
		return life
	}
	// It still comes from where the request came from (Origin).
	return withOriginOf(context.Background(), from)
}

// WithClientOf returns ctx carrying the client of from's request, and its
// Origin: a call an executor makes back into the gateway on behalf of a
// client's call (sdk.Call.CallTool) arrives on a context of its own.
func WithClientOf(ctx, from context.Context) context.Context {
	ctx = withOriginOf(ctx, from)
	if id, _ := from.Value(clientKey{}).(string); id != "" {
		return withClient(ctx, id)
	}
	return ctx
}

// ClientOf returns an opaque key for the client ctx's request came from,
// for sdk.CallRequest.Client: the same for every request of one 2025-11-25
// (or older) session and for every request of the stdio client, whatever
// its protocol era (stdio has one client), and "" for a 2026-07-28 request
// over HTTP, which belongs to no session. The key is a keyed
// hash, so an executor never learns a session id it could present as its
// own.
func ClientOf(ctx context.Context) string {
	id, _ := ctx.Value(clientKey{}).(string)
	if id == "" {
		return ""
	}
	var b [16]byte
	return string(strconv.AppendUint(append(b[:0], 'c'), maphash.String(clientSeed, id), 36))
}
