// Package frontend is the gateway's MCP face: the streamable HTTP endpoint
// (both the stateless 2026-07-28 revision and the session-based 2025-11-25
// and older ones) and the stdio transport. It is the only package that
// imports mcp-go's server package.
//
// The front end serves whatever catalog snapshot it was last given with
// Update, and sends every call to a Router. Lists are served from the
// snapshot's pre-encoded bytes on the HTTP fast path, so the definitions a
// client sees are the upstream's bytes with only the names changed.
//
//	fe := frontend.New(router, frontend.Options{Name: "skillgate", Version: "dev"})
//	fe.Update(store.Load())
//	http.ListenAndServe("127.0.0.1:8811", fe.Handler())
package frontend
