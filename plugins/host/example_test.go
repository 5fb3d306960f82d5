package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"

	"github.com/skillgate/skillgate/plugins/host"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A gateway starts its built-in executors by re-executing its own binary,
// and the third-party ones it finds in its plugins dirs.
func Example() {
	ctx := context.Background()
	logger := slog.Default()
	m := host.NewManager(host.Options{Logger: logger})
	defer m.Close()

	self, err := os.Executable()
	if err != nil {
		logger.Error("find own binary", "error", err)
		return
	}
	specs := []host.Spec{{Name: "mcp", Path: self, Args: []string{"plugin", "serve", "mcp"}}}
	found, problems := host.Discover([]string{"./plugins"})
	for _, err := range problems {
		logger.Warn("plugin skipped", "error", err)
	}
	for _, spec := range append(specs, found...) {
		if _, err := m.Start(ctx, spec); err != nil {
			logger.Error("executor not started", "error", err)
		}
	}

	if mcp, ok := m.Get("mcp"); ok {
		go func() {
			_ = mcp.Watch(ctx, func(ch sdk.Change) {
				// Update the catalog: ch.Definitions after a restart or an
				// upstream list_changed, ch.Status for the source's health.
			})
		}()
		_, err := mcp.Call(ctx, sdk.CallRequest{Source: "everything", Method: "tools/call",
			Params: json.RawMessage(`{"name":"echo","arguments":{"message":"hi"}}`)}, nil)
		if errors.Is(err, sdk.ErrPluginShutdown) {
			logger.Warn("executor down, restarting", "status", mcp.Status())
		}
	}
}
