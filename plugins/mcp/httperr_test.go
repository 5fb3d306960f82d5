package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestRemoteErrors: a remote server that cannot be reached or refuses the
// gateway fails its Load with one *ConnectError that says what failed, at
// which URL, and what to do, without repeated prefixes or internal words.
func TestRemoteErrors(t *testing.T) {
	refusedURL := "http://127.0.0.1:" + strconv.Itoa(testenv.FreePort(t)) + "/mcp"
	var sawAuth []string
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = append(sawAuth, r.Header.Get("Authorization"))
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(unauthorized.Close)
	missing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(missing.Close)
	htmlPage := "<!DOCTYPE html><html><head><title>Not Found</title></head><body>" + strings.Repeat("<p>lost</p>", 50) + "</body></html>"
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":"ok"}`)
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, htmlPage)
		}
	}))
	t.Cleanup(web.Close)
	// What server-everything's streamable HTTP endpoint answers a GET
	// without a session.
	streamable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
	}))
	t.Cleanup(streamable.Close)

	e := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = e.Close() })
	for _, tc := range []struct {
		name   string
		spec   map[string]any
		status int
		want   []string
	}{
		{"refused", map[string]any{"url": refusedURL}, 0, []string{
			refusedURL + ": connection refused: nothing listens at 127.0.0.1:", "is the server running? check the server's url"}},
		{"refused over sse", map[string]any{"url": refusedURL, "transport": "sse"}, 0, []string{
			refusedURL + ": connection refused"}},
		{"no token", map[string]any{"url": unauthorized.URL + "/mcp"}, 401, []string{
			"HTTP 401 Unauthorized: the server wants credentials (it uses OAuth; its metadata: " + unauthorized.URL + "/.well-known/oauth-protected-resource)",
			`headers: {Authorization: "Bearer ${TOKEN}"}`, "does not run an OAuth authorization flow"}},
		{"no token over sse", map[string]any{"url": unauthorized.URL + "/sse", "transport": "sse"}, 401, []string{
			"HTTP 401 Unauthorized", `headers: {Authorization: "Bearer ${TOKEN}"}`}},
		{"wrong token", map[string]any{"url": unauthorized.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer nope"}}, 401, []string{
			"HTTP 401 Unauthorized", "it refused the Authorization header set in the server's headers: check the token"}},
		{"not an SSE endpoint", map[string]any{"url": missing.URL + "/nowhere", "transport": "sse"}, 404, []string{
			"HTTP 404 Not Found", "is url the server's MCP endpoint? check its path"}},
		{"not an MCP endpoint", map[string]any{"url": web.URL + "/healthz"}, 200, []string{
			web.URL + "/healthz: ", "is url the server's MCP endpoint?"}},
		{"an HTML 404 page", map[string]any{"url": web.URL + "/nowhere", "transport": "sse"}, 404, []string{
			"HTTP 404 Not Found", "is url the server's MCP endpoint? check its path"}},
		{"sse on a streamable endpoint", map[string]any{"url": streamable.URL + "/mcp", "transport": "sse"}, 400, []string{
			"HTTP 400", "type: http"}},
		{"a legacy server pinned to streamable HTTP", map[string]any{"url": missing.URL + "/sse", "transport": "streamable-http"}, 0, []string{
			"may serve only the legacy HTTP+SSE transport", "set transport: sse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := e.Load(ctx, sdk.LoadRequest{Source: "r", Kind: Kind, Spec: mustJSON(tc.spec)})
			var ce *ConnectError
			if !errors.As(err, &ce) || ce.Status != tc.status {
				t.Fatalf("err = %v (%T); want a *ConnectError with status %d", err, err, tc.status)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v\nwant it to say %q", err, want)
				}
			}
			for _, noise := range []string{"failed to send request", "source unavailable", "initialize:", "upstream connection closed", "<p>", "RPC id"} {
				if strings.Contains(err.Error(), noise) {
					t.Errorf("err = %v; want no %q", err, noise)
				}
			}
			if n := strings.Count(err.Error(), `source "r"`); n != 1 {
				t.Errorf("err = %v; names the source %d times", err, n)
			}
		})
	}
	if len(sawAuth) == 0 || !strings.Contains(strings.Join(sawAuth, ","), "Bearer nope") {
		t.Fatalf("Authorization headers the server saw: %q", sawAuth)
	}
}

// TestTransportLogQuiet: what mcp-go's transport logs on its own (that it
// listens, and every second while a server is down that it retries) is
// kept at debug level.
func TestTransportLogQuiet(t *testing.T) {
	s := server.NewMCPServer("quiet", "1.0.0", server.WithToolCapabilities(true))
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	h := newHarness(t)
	h.load("quiet", map[string]any{"url": ts.URL, "protocol_version": "2025-11-25"})
	ts.CloseClientConnections()
	ts.Close()
	retry := regexp.MustCompile(`msg="failed to listen to server. retry in 1 second"`)
	for deadline := time.Now().Add(20 * time.Second); !retry.MatchString(h.logs.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mcp-go never logged its retry (at any level):\n%s", h.logs.String())
		}
	}
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if (strings.Contains(l, "listening to server forever") || retry.MatchString(l)) && !strings.Contains(l, "level=DEBUG") {
			t.Fatalf("mcp-go's chatter above debug level: %s", l)
		}
	}
}
