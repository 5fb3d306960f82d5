package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/mcp"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// RemoteCall is a tool call to a running gateway (or any MCP server).
type RemoteCall struct {
	// URL is the MCP endpoint; a URL with no path (http://127.0.0.1:8811)
	// means its /mcp.
	URL string
	// Token, when set, is sent as Authorization: Bearer.
	Token string
	// Tool is the tool's name on that endpoint.
	Tool string
	// Args returns the call's arguments, given the tool's inputSchema.
	Args func(inputSchema json.RawMessage) (json.RawMessage, error)
}

// CallRemote calls a tool on the MCP endpoint rc.URL (see DialRemote) and
// returns the CallToolResult JSON. log may be nil.
func CallRemote(ctx context.Context, log *slog.Logger, rc RemoteCall, call sdk.Call) (json.RawMessage, error) {
	r, err := DialRemote(ctx, log, rc.URL, rc.Token)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// A tool the list lacks is called all the same: the gateway says why
	// it is missing (its server is not ready, say), or refuses it.
	args, err := rc.Args(r.InputSchema(rc.Tool))
	if err != nil {
		return nil, err
	}
	return r.Call(ctx, rc.Tool, args, call)
}

// Remote is a client of a running gateway, or of any MCP server, for the
// CLI's --url commands: one connection for every call a command makes.
// Its methods may be called concurrently; Close ends it.
type Remote struct {
	ex       sdk.Executor
	endpoint string
	tools    []json.RawMessage
	close    func() error
}

// remoteProtocol is the revision a Remote asks for: stateless, so that
// the requests of one command may each reach another replica behind a
// load balancer. A server that does not speak it gets a 2025-11-25
// session (the mcp executor falls back by itself).
const remoteProtocol = "2026-07-28"

// DialRemote connects to the MCP endpoint of rawURL (see MCPURL), with the
// mcp executor in process as the client, and lists its tools. token, when
// set, is sent as Authorization: Bearer. log may be nil.
//
// Connecting lists the endpoint's tools (the executor's Load always does),
// which is where InputSchema comes from: it costs one tools/list (plus
// resources/list and prompts/list) per Remote, not per call.
func DialRemote(ctx context.Context, log *slog.Logger, rawURL, token string) (*Remote, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	endpoint := MCPURL(rawURL)
	insecure, err := CheckTokenTransport(endpoint, token)
	if err != nil {
		return nil, err
	}
	if insecure {
		log.Warn("sending the bearer token in plain text (http://) to a host that is not this machine: anyone on the path can read it and use it; use https:// or an SSH tunnel to 127.0.0.1",
			"url", endpoint, "because", AllowInsecureEnv+"=1")
	}
	spec := map[string]any{"url": endpoint, "protocol_version": remoteProtocol}
	if token != "" {
		spec["headers"] = map[string]string{"Authorization": "Bearer " + token}
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	ex, _ := builtin.New("mcp", log)
	// The source is named after the endpoint, so that whatever the
	// executor says of it names the URL, not an internal name.
	defs, err := ex.Load(ctx, sdk.LoadRequest{Source: endpoint, Kind: "mcp", Spec: specJSON})
	if err != nil {
		if c, ok := ex.(io.Closer); ok {
			c.Close()
		}
		return nil, remoteError(endpoint, token != "", err)
	}
	r := &Remote{ex: ex, endpoint: endpoint, tools: defs.Tools}
	r.close = sync.OnceValue(func() error {
		err := ex.Unload(context.Background(), endpoint)
		if c, ok := ex.(io.Closer); ok {
			err = errors.Join(err, c.Close())
		}
		return err
	})
	return r, nil
}

// URL is the MCP endpoint r talks to.
func (r *Remote) URL() string { return r.endpoint }

// InputSchema returns the inputSchema of tool as the endpoint's tools/list
// shows it, or nil when the list lacks the tool: a gateway lists the
// meta-tools and what a client activated, and runs the others all the same.
func (r *Remote) InputSchema(tool string) json.RawMessage {
	for _, t := range r.tools {
		var d struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(t, &d) == nil && d.Name == tool {
			return d.InputSchema
		}
	}
	return nil
}

// Call calls tool with args (a JSON object, or nil) and returns the
// CallToolResult JSON. An error the tool's server answered with is an
// *sdk.RPCError.
func (r *Remote) Call(ctx context.Context, tool string, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	params, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	res, err := r.ex.Call(ctx, sdk.CallRequest{Source: r.endpoint, Method: "tools/call", Params: params}, call)
	var rpc *sdk.RPCError
	if err != nil && ctx.Err() == nil && errors.Is(err, mcp.ErrSessionLost) {
		// Another replica, or a restarted gateway, answered the session.
		return nil, fmt.Errorf("call %s at %s: %v; %s", tool, r.endpoint, err, stickyHint)
	}
	if err != nil && ctx.Err() == nil && !errors.As(err, &rpc) {
		// Connected and sent, but the answer never came: the connection
		// ended (the gateway stopped or restarted) or broke.
		return nil, fmt.Errorf("call %s at %s: no answer (%v); did the gateway stop? Its log, or `skillgate servers --url`, tells", tool, r.endpoint, err)
	}
	return res, err
}

// Close ends the connection. It is safe to call more than once.
func (r *Remote) Close() error { return r.close() }

// runningHint is the advice for a gateway that nothing answers for.
const runningHint = "is the gateway running? `skillgate run` serves http://127.0.0.1:8811/mcp"

// stickyHint is the advice for a server that lost its session between two
// requests, as one behind a load balancer without sticky sessions does.
const stickyHint = "the server keeps sessions (it does not speak MCP 2026-07-28) and did not know this one on a later request: " +
	"behind a load balancer, make sessions sticky (route on the Mcp-Session-Id header) or pass --url one replica's URL"

// remoteError says why the gateway at endpoint could not be reached, with
// advice for `skillgate call --url` rather than for a config's server
// entry (which the mcp executor's own advice is about).
func remoteError(endpoint string, token bool, err error) error {
	var ce *mcp.ConnectError
	if !errors.As(err, &ce) {
		// The executor names the source, which is endpoint: said once.
		msg := strings.Replace(err.Error(), fmt.Sprintf("load source %q: ", endpoint), "", 1)
		return &wrapped{fmt.Sprintf("connect to %s: %s", endpoint, withHint(msg, "", err)), err}
	}
	hint := ""
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		hint = runningHint
	case ce.Status == http.StatusUnauthorized && !token:
		hint = "the gateway has auth.tokens: pass one with --token or SKILLGATE_TOKEN"
	case ce.Status == http.StatusUnauthorized:
		hint = "the gateway refused the token given: check --token or SKILLGATE_TOKEN against its auth.tokens"
	case ce.Status == http.StatusNotFound:
		hint = "check the URL: a gateway serves /mcp and /mcp/p/PROFILE"
	}
	return &wrapped{fmt.Sprintf("connect to %s: %s", endpoint, withHint(ce.Problem, hint, err)), err}
}

// withHint is problem followed by hint; without a hint, by stickyHint
// when err is a lost session (mcp.ErrSessionLost), or its problem names
// the session in words of mcp-go's or a server's own.
func withHint(problem, hint string, err error) string {
	if hint == "" && (errors.Is(err, mcp.ErrSessionLost) || strings.Contains(strings.ToLower(problem), "session")) {
		hint = stickyHint
	}
	if hint == "" {
		return problem
	}
	return problem + "; " + hint
}

// ReachError explains the error of an HTTP request to a running gateway
// at rawURL (its /readyz, its /stats) in the words CallRemote uses when
// it cannot connect.
func ReachError(rawURL string, err error) error {
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil {
		host = u.Host
	}
	var dns *net.DNSError
	var ue *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &wrapped{fmt.Sprintf("connect to %s: connection refused: nothing listens at %s; %s", rawURL, host, runningHint), err}
	case errors.As(err, &dns):
		return &wrapped{fmt.Sprintf("connect to %s: host %q not found (DNS: %s)", rawURL, dns.Name, dns.Err), err}
	case errors.As(err, &ue):
		return &wrapped{fmt.Sprintf("connect to %s: %v", rawURL, ue.Err), err} // its Op and URL said already
	}
	return &wrapped{fmt.Sprintf("connect to %s: %v", rawURL, err), err}
}

// wrapped is an error with a message of its own over the error it
// explains, which errors.Is and errors.As still find.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// AllowInsecureEnv names the environment variable that, set to 1, lets
// the CLI send a bearer token over plain http:// to a host other than
// this machine (CheckTokenTransport).
const AllowInsecureEnv = "SKILLGATE_ALLOW_INSECURE"

// CheckTokenTransport refuses to send token to rawURL (an http:// or
// https:// URL) in plain text: over http:// to a host that is not a
// loopback one, anyone on the path reads the token and may use it. It
// returns an error saying what to do instead, unless AllowInsecureEnv is
// 1: then insecure reports true, and the caller warns. Without a token, or
// over https://, or to localhost and loopback addresses, it allows all.
func CheckTokenTransport(rawURL, token string) (insecure bool, err error) {
	if token == "" {
		return false, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || isLoopbackHost(u.Hostname()) {
		return false, nil // a URL that does not parse fails when dialled
	}
	if os.Getenv(AllowInsecureEnv) == "1" {
		return true, nil
	}
	return false, fmt.Errorf("connect to %s: refusing to send the bearer token (--token or SKILLGATE_TOKEN) in plain text over http:// "+
		"to %s, which is not this machine: anyone on the path could read it; use https://, or an SSH tunnel to 127.0.0.1, "+
		"or set %s=1 to send it anyway", rawURL, u.Host, AllowInsecureEnv)
}

// isLoopbackHost reports whether host (a name or an address, without a
// port) is this machine: localhost, or a loopback address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MCPURL is the MCP endpoint of a gateway given by its base URL
// (http://127.0.0.1:8811, or 127.0.0.1:8811, means
// http://127.0.0.1:8811/mcp) or by the endpoint itself.
func MCPURL(base string) string {
	if !strings.Contains(base, "://") {
		base = "http://" + base // 127.0.0.1:8811
	}
	u, err := url.Parse(base)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return base
	}
	u.Path = "/mcp"
	return u.String()
}

// ToolDefinition returns the definition of the tool served as name, as
// clients see it in tools/list.
func (g *Gateway) ToolDefinition(name string) (json.RawMessage, bool) {
	it, ok := g.store.Load().Tool(name)
	if !ok {
		return nil, false
	}
	return it.Raw, true
}
