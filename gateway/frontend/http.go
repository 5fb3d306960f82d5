package frontend

import (
	"bytes"
	"crypto/subtle"

	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Path is the endpoint path; default "/mcp".
	Path string
	// AllowedOrigins lists browser origins (scheme://host[:port]) allowed in
	// addition to loopback ones. A request with any other Origin is refused.
	AllowedOrigins []string
	// Tokens, when not empty, are the accepted bearer tokens.
	Tokens []string
	// BodyCap is the largest request body accepted; default 4 MiB.
	BodyCap int64
}

// Handler returns the streamable HTTP endpoint, guarded by Origin and Host
// validation, bearer tokens and a body cap.
func (s *Server) Handler() http.Handler {
	o := s.opts.HTTP
	if o.Path == "" {
		o.Path = "/mcp"
	}
	if o.BodyCap <= 0 {
		o.BodyCap = 4 << 20
	}
	inner := server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(o.Path),
		server.WithStreamableHTTPLogger(s.log),
	)
	return &guard{s: s, opts: o, next: inner}
}

// guard applies the gateway's HTTP rules before mcp-go sees a request.
type guard struct {
	s    *Server
	opts HTTPOptions
	next http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !hostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q for a loopback listener", r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed; add it to listen.allowed_origins", origin), http.StatusForbidden)
		return
	}
	if len(g.opts.Tokens) > 0 && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillgate"`)
		http.Error(w, "Unauthorized: send Authorization: Bearer <token> with a token from auth.tokens", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, g.opts.BodyCap+1))
		if err != nil {
			http.Error(w, "Bad Request: reading body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if int64(len(body)) > g.opts.BodyCap {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (limits.http_body_cap)", g.opts.BodyCap), http.StatusRequestEntityTooLarge)
			return
		}
		if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported; send one request per POST"}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		if req, ok := parseRequest(body); ok {
			_, isList := listKeys[req.Method]
			switch {
			case req.Method == "initialize":
				g.next.ServeHTTP(&sessionTracker{ResponseWriter: w, s: g.s, plain: !declaresServerRequests(body)}, r)
				return
			case isList && req.Params.Cursor == nil && len(req.ID) > 0:
				if _, ok := g.legacySession(r, req); ok {
					g.s.serveLegacyList(w, req)
					return
				}
			case req.Method == string(mcp.MethodToolsCall):
				if sess, ok := g.legacySession(r, req); ok && sess.plain && g.s.serveFastCall(w, r, sess, &req) {
					return
				}
			case req.Method == string(mcp.MethodNotificationCancelled):
				if id := r.Header.Get("Mcp-Session-Id"); id != "" && g.s.cancelFast(id, body) {
					w.WriteHeader(http.StatusAccepted)
					return
				}
			}
			defer g.s.drained(r.Header.Get("Mcp-Session-Id"), g.s.notified.Load())
			if rewrites(req.Method) && (!isList || req.Params.Cursor == nil) {
				g.s.serveRewritten(w, r, g.next, req.Method)
				return
			}
		}
	}
	if r.Method == http.MethodDelete {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			defer g.s.sessions.Delete(id)
		}
	}
	g.next.ServeHTTP(w, r)
}

// legacySession reports whether r belongs to a live session of the
// 2025-11-25 era or older that mcp-go issued, with no notification that
// mcp-go may still hold for it: mcp-go delivers a session's queued
// notifications on its next request, so a session is answered past mcp-go
// only once a request of its own went through mcp-go after the last
// notification to all sessions.
func (g *guard) legacySession(r *http.Request, req request) (*session, bool) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" || mcp.IsModernProtocol(r.Header.Get("MCP-Protocol-Version")) || mcp.IsModernProtocol(req.protocolVersion()) {
		return nil, false
	}
	v, ok := g.s.sessions.Load(id)
	if !ok {
		return nil, false
	}
	if pv := r.Header.Get("MCP-Protocol-Version"); pv != "" && !slices.Contains(mcp.ValidProtocolVersions, pv) {
		return nil, false // mcp-go answers an unsupported version with its error
	}
	sess := v.(*session)
	return sess, sess.drained.Load() == g.s.notified.Load()
}

// hostAllowed guards against DNS rebinding: a request that reached a
// loopback listener must name a loopback host (mcp-go checks the same; the
// front end's fast paths answer before mcp-go sees the request).
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return true
	}
	return isLoopback(r.Host)
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed accepts loopback origins and the configured ones.
func (g *guard) originAllowed(origin string) bool {
	for _, o := range g.opts.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (g *guard) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	got := []byte(h[len(prefix):])
	ok := 0
	for _, t := range g.opts.Tokens {
		ok |= subtle.ConstantTimeCompare(got, []byte(t))
	}
	return ok == 1
}
