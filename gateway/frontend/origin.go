package frontend

import "context"

// The transports of an Origin.
const (
	// TransportStdio is the stdio client: the one that launched the
	// gateway, as the user it runs as.
	TransportStdio = "stdio"
	// TransportHTTP is a request to the HTTP endpoint.
	TransportHTTP = "http"
	// TransportProcess is no client: a caller inside the gateway's own
	// process, such as the CLI's one-shot commands (skillgate call,
	// skillgate pipeline run), run by the user who runs the gateway.
	TransportProcess = "process"
)

// Origin is what the front end knows of where a client's request came
// from, for the gateway to decide what the client may do (admin.writes).
// The stdio front end gives it to every request of its client and the
// HTTP endpoint to every request its access rules admit; a request
// without one did not come through the front end.
type Origin struct {
	// Transport is TransportStdio, TransportHTTP or TransportProcess.
	Transport string
	// Token says that the request presented a bearer token of auth.tokens.
	Token bool
}

// originKey carries a request's Origin in its context.
type originKey struct{}

// WithOrigin returns ctx carrying o.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf returns the Origin of ctx's request; ok is false for a context
// that did not come from a client of the front end.
func OriginOf(ctx context.Context) (o Origin, ok bool) {
	o, ok = ctx.Value(originKey{}).(Origin)
	return o, ok
}

// withOriginOf returns ctx carrying from's Origin, if it has one.
func withOriginOf(ctx, from context.Context) context.Context {
	if o, ok := OriginOf(from); ok {
		return WithOrigin(ctx, o)
	}
	return ctx
}
