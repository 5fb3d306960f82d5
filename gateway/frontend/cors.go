package frontend

import (
	"net/http"
	"strings"
)

// A browser page may use the endpoint from an origin the access rules
// allow (a loopback one, or one of listen.allowed_origins): its requests
// carry that Origin, and the answers say the origin may read them. The
// preflight a browser sends before a POST with an Authorization or
// Mcp-Session-Id header carries no token, so it is answered before the
// token check; it reveals nothing but these rules. Any other origin is
// refused with 403 before it gets here (guard.admit).

// corsRequestHeaders are the headers a page may send, when its preflight
// names none: the transport's and the bearer token.
const corsRequestHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"

// corsExposedHeaders are the answer headers a page may read.
const corsExposedHeaders = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After"

// allowCORS adds the CORS headers to the answer of a request with an
// (allowed) Origin, and answers a preflight itself, reporting whether it
// did.
func allowCORS(w http.ResponseWriter, r *http.Request) (preflight bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", corsExposedHeaders)
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	// The allowed origin is trusted with the headers it asks for: a
	// 2026-07-28 client sends headers named after tool parameters too.
	allow := corsRequestHeaders
	if asked := strings.TrimSpace(r.Header.Get("Access-Control-Request-Headers")); asked != "" {
		allow = asked
	}
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
