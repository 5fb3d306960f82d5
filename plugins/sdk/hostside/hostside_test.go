package hostside_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/skillgate/skillgate/plugins/sdk"
	"github.com/skillgate/skillgate/plugins/sdk/hostside"
)

type echo struct{}

func (echo) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "echo", Kinds: []string{"echo"}}, nil
}
func (echo) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	return sdk.Definitions{}, nil
}
func (echo) Unload(context.Context, string) error { return nil }
func (echo) Call(_ context.Context, req sdk.CallRequest, _ sdk.Call) (json.RawMessage, error) {
	return req.Params, nil
}

// TestPluginSets: every version's plugin set dispenses a *Client that
// speaks that version, and VersionedPlugins has one set per version.
func TestPluginSets(t *testing.T) {
	sets := hostside.VersionedPlugins(nil, nil)
	if len(sets) != sdk.ProtocolVersion-sdk.MinProtocolVersion+1 {
		t.Fatalf("VersionedPlugins has %d sets, want versions %d to %d", len(sets), sdk.MinProtocolVersion, sdk.ProtocolVersion)
	}
	for v := sdk.MinProtocolVersion; v <= sdk.ProtocolVersion; v++ {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			rpc, server := plugin.TestPluginGRPCConn(t, false, hostside.PluginSet(echo{}, nil, v))
			t.Cleanup(func() {
				server.Stop()
				_ = rpc.Close()
			})
			raw, err := rpc.Dispense(hostside.PluginName)
			if err != nil {
				t.Fatal(err)
			}
			c, ok := raw.(*hostside.Client)
			if !ok {
				t.Fatalf("Dispense returned %T, want *hostside.Client", raw)
			}
			t.Cleanup(func() { _ = c.Close() })
			if c.Version() != v {
				t.Errorf("Version() = %d, want %d", c.Version(), v)
			}
			if info, err := c.Info(t.Context()); err != nil || info.Name != "echo" {
				t.Fatalf("Info = %+v, %v", info, err)
			}
			res, err := c.Call(t.Context(), sdk.CallRequest{Source: "a", Method: "echo", Params: json.RawMessage(`{"x":1}`)}, nil)
			if err != nil || string(res) != `{"x":1}` {
				t.Errorf("Call = %s, %v", res, err)
			}
		})
	}
	if hs := hostside.Handshake(); hs.ProtocolVersion != sdk.ProtocolVersion || hs.MagicCookieKey == "" {
		t.Errorf("Handshake() = %+v", hs)
	}
	// The handshake is a value: changing a copy changes nothing.
	hs := hostside.Handshake()
	hs.MagicCookieValue = "changed"
	if hostside.Handshake().MagicCookieValue == "changed" {
		t.Error("Handshake() shares its value")
	}
}
