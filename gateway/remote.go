package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
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

// CallRemote calls a tool on the MCP endpoint rc.URL, using the mcp
// executor in process as the client, and returns the CallToolResult JSON.
// log may be nil.
func CallRemote(ctx context.Context, log *slog.Logger, rc RemoteCall, call sdk.Call) (json.RawMessage, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	endpoint := MCPURL(rc.URL)
	ex, _ := builtin.New("mcp", log)
	if c, ok := ex.(io.Closer); ok {
		defer c.Close()
	}
	spec := map[string]any{"url": endpoint}
	if rc.Token != "" {
		spec["headers"] = map[string]string{"Authorization": "Bearer " + rc.Token}
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	defs, err := ex.Load(ctx, sdk.LoadRequest{Source: "remote", Kind: "mcp", Spec: specJSON})
	if err != nil {
		return nil, remoteError(endpoint, rc.Token != "", err)
	}
	defer ex.Unload(context.Background(), "remote")
	var schema json.RawMessage
	for _, t := range defs.Tools {
		var d struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(t, &d) == nil && d.Name == rc.Tool {
			schema = d.InputSchema
			break
		}
	}
	// A tool the list lacks is called all the same: the gateway says why
	// it is missing (its server is not ready, say), or refuses it.
	args, err := rc.Args(schema)
	if err != nil {
		return nil, err
	}
	params, err := json.Marshal(map[string]any{"name": rc.Tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	res, err := ex.Call(ctx, sdk.CallRequest{Source: "remote", Method: "tools/call", Params: params}, call)
	var rpc *sdk.RPCError
	if err != nil && ctx.Err() == nil && !errors.As(err, &rpc) {
		// Connected and sent, but the answer never came: the connection
		// ended (the gateway stopped or restarted) or broke.
		return nil, fmt.Errorf("call %s at %s: no answer (%v); did the gateway stop? Its log, or `skillgate servers --url`, tells", rc.Tool, endpoint, err)
	}
	return res, err
}

// remoteError says why the gateway at endpoint could not be reached, with
// advice for `skillgate call --url` rather than for a config's server
// entry (which the mcp executor's own advice is about).
func remoteError(endpoint string, token bool, err error) error {
	var ce *mcp.ConnectError
	if !errors.As(err, &ce) {
		return fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	hint := ""
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		hint = "is the gateway running? `skillgate run` serves http://127.0.0.1:8811/mcp"
	case ce.Status == http.StatusUnauthorized && !token:
		hint = "the gateway has auth.tokens: pass one with --token or SKILLGATE_TOKEN"
	case ce.Status == http.StatusUnauthorized:
		hint = "the gateway refused the token given: check --token or SKILLGATE_TOKEN against its auth.tokens"
	case ce.Status == http.StatusNotFound:
		hint = "check the URL: a gateway serves /mcp and /mcp/p/PROFILE"
	}
	if hint == "" {
		return fmt.Errorf("connect to %s: %s", endpoint, ce.Problem)
	}
	return fmt.Errorf("connect to %s: %s; %s", endpoint, ce.Problem, hint)
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
