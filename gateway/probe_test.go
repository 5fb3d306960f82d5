package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// probeExecutor is a third-party executor plugin served by the test binary
// (envStub "plugin"), installed in a plugins dir under any name by
// installProbe. Its tools tell what the gateway does for a plugin:
//
//   - pid answers the plugin process's pid;
//   - env answers the value of the environment variable "name";
//   - log writes a Host.Log record "probe says LEVEL" for each of "levels";
//   - callback calls the gateway's tool "tool" through the call's CallTool
//     and describes the error it got, as the plugin sees it.
type probeExecutor struct{ host sdk.Host }

var (
	_ sdk.Executor = (*probeExecutor)(nil)
	_ sdk.HostUser = (*probeExecutor)(nil)
)

func (p *probeExecutor) SetHost(h sdk.Host) { p.host = h }

func (p *probeExecutor) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "probe", Version: "1", Kinds: []string{"probe"}}, nil
}

func (p *probeExecutor) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	return sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"pid","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"env","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`),
		json.RawMessage(`{"name":"log","inputSchema":{"type":"object","properties":{"levels":{"type":"array","items":{"type":"string"}}}}}`),
		json.RawMessage(`{"name":"callback","inputSchema":{"type":"object","properties":{"tool":{"type":"string"}}}}`),
	}}, nil
}

func (p *probeExecutor) Unload(context.Context, string) error { return nil }

func (p *probeExecutor) Call(ctx context.Context, req sdk.CallRequest, call sdk.Call) (json.RawMessage, error) {
	var params struct {
		Name string `json:"name"`
		Args struct {
			Name   string   `json:"name"`
			Levels []string `json:"levels"`
			Tool   string   `json:"tool"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil {
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: err.Error()}
	}
	var text string
	switch params.Name {
	case "pid":
		text = strconv.Itoa(os.Getpid())
	case "env":
		text = os.Getenv(params.Args.Name)
	case "log":
		for _, l := range params.Args.Levels {
			if err := p.host.Log(ctx, l, "probe says "+l, map[string]string{"probe": "yes"}); err != nil {
				return nil, err
			}
		}
		text = "logged"
	case "callback":
		_, err := call.CallTool(ctx, params.Args.Tool, json.RawMessage(`{}`))
		var rpc *sdk.RPCError
		switch {
		case errors.As(err, &rpc):
			text = fmt.Sprintf("rpc error %d: %s", rpc.Code, rpc.Message)
		case err != nil:
			text = "plain error: " + err.Error()
		default:
			text = "no error"
		}
	default:
		return nil, &sdk.RPCError{Code: sdk.CodeInvalidParams, Message: "unknown tool " + params.Name}
	}
	return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
}

// installProbe puts the probe executor into dir as the plugin name: a
// script that runs the test binary as the plugin (a plugin inherits no
// environment from the gateway, so the script sets what it needs).
func installProbe(t *testing.T, dir, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	script := fmt.Sprintf("#!/bin/sh\n%s=plugin GORACE=atexit_sleep_ms=0 exec %s\n", envStub, strconv.Quote(exe))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// executorPIDs returns the pid of each executor process, by name.
func executorPIDs(gw *gateway.Gateway) map[string]int {
	out := map[string]int{}
	for _, e := range gw.ExecutorsStatus() {
		out[e.Name] = e.PID
	}
	return out
}
