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
	"time"

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

func (p *probeExecutor) Load(ctx context.Context, _ sdk.LoadRequest) (sdk.Definitions, error) {
	// A probe installed by installHeld answers its loads once the test
	// releases it.
	if hold := os.Getenv(envHold); hold != "" {
		for {
			if _, err := os.Stat(hold); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return sdk.Definitions{}, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	defs := sdk.Definitions{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"pid","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"env","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`),
		json.RawMessage(`{"name":"log","inputSchema":{"type":"object","properties":{"levels":{"type":"array","items":{"type":"string"}}}}}`),
		json.RawMessage(`{"name":"callback","inputSchema":{"type":"object","properties":{"tool":{"type":"string"}}}}`),
	}}
	if extra := os.Getenv(envExtraTools); extra != "" {
		var more []json.RawMessage
		if err := json.Unmarshal([]byte(extra), &more); err != nil {
			return sdk.Definitions{}, fmt.Errorf("%s: %w", envExtraTools, err)
		}
		defs.Tools = append(defs.Tools, more...)
	}
	return defs, nil
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

// envHold names a file the probe executor waits for before it answers a
// load (installHeld).
const envHold = "SKILLGATE_GATEWAY_TEST_HOLD"

// envExtraTools holds a JSON array of tool definitions the probe lists
// after its own (catalogwarn_test.go).
const envExtraTools = "SKILLGATE_GATEWAY_TEST_EXTRA_TOOLS"

// installProbe puts the probe executor into dir as the plugin name: a
// script that runs the test binary as the plugin (a plugin inherits no
// environment from the gateway, so the script sets what it needs).
func installProbe(t *testing.T, dir, name string) string {
	t.Helper()
	return writeProbe(t, dir, name, "")
}

// installHeld is installProbe for a probe that starts at once but answers
// no load until the test calls release: its source's first load holds up
// the gateway's start for as long as the test wants, not for a timeout.
// A load still held ends when its context does (the gateway stops).
func installHeld(t *testing.T, dir, name string) (release func()) {
	t.Helper()
	hold := filepath.Join(t.TempDir(), "release")
	writeProbe(t, dir, name, envHold+"="+strconv.Quote(hold)+" ")
	return func() {
		t.Helper()
		if err := os.WriteFile(hold, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeProbe writes the probe's script, with env (NAME=VALUE pairs, each
// followed by a space) set for it.
func writeProbe(t *testing.T, dir, name, env string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	script := fmt.Sprintf("#!/bin/sh\n%s%s=plugin GORACE=atexit_sleep_ms=0 exec %s\n", env, envStub, strconv.Quote(exe))
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
