package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/skillgate/skillgate/plugins/builtin"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// CallRemote calls a tool on the MCP endpoint at url (a running gateway or
// any MCP server), using the mcp executor in process as the client, and
// returns the CallToolResult JSON. log may be nil.
func CallRemote(ctx context.Context, log *slog.Logger, url, tool string, args json.RawMessage, call sdk.Call) (json.RawMessage, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ex, _ := builtin.New("mcp", log)
	if c, ok := ex.(io.Closer); ok {
		defer c.Close()
	}
	spec, err := json.Marshal(map[string]any{"url": url})
	if err != nil {
		return nil, err
	}
	if _, err := ex.Load(ctx, sdk.LoadRequest{Source: "remote", Kind: "mcp", Spec: spec}); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	defer ex.Unload(context.Background(), "remote")
	params, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	return ex.Call(ctx, sdk.CallRequest{Source: "remote", Method: "tools/call", Params: params}, call)
}
