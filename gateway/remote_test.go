package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
)

// TestCallRemoteGatewayStops: a remote call (`skillgate call --url`) whose
// gateway stops before it answers says so, rather than the MCP client's
// "unexpected nil response": with the gateway's answer to the call it cuts
// after limits.drain_timeout, which asks to send it again, or, when the
// client gives up first (its event stream ended with the drain, and the
// listener is closed when it reconnects), naming the tool and the URL.
func TestCallRemoteGatewayStops(t *testing.T) {
	tools := t.TempDir()
	writeFiles(t, filepath.Join(tools, "hang"), map[string]string{
		"tool.yaml": "name: hang\ndescription: Say it started, then wait forever.\nruntime: python\nentry: main.py\n" +
			"input_schema: {type: object, properties: {path: {type: string}}, required: [path]}\n",
		"main.py": "import json, sys, time\nopen(json.load(sys.stdin)[\"path\"], \"w\").close()\ntime.sleep(600)\n",
	})
	cfg, err := config.Parse(strings.NewReader("limits: {drain_timeout: 1s}\ntools: {dirs: [\""+tools+"\"]}\n"), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := serveConfig(t, cfg)
	s.waitStarted(t)
	started := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := gateway.CallRemote(ctx, nil, gateway.RemoteCall{URL: s.url, Tool: "tools__hang",
			Args: func(json.RawMessage) (json.RawMessage, error) {
				return json.Marshal(map[string]string{"path": started})
			}}, &recorder{})
		errc <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool did not start within a minute")
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	answered := err != nil && strings.Contains(err.Error(), "the gateway is stopping; send the request again")
	gaveUp := err != nil && strings.Contains(err.Error(), "tools__hang") && strings.Contains(err.Error(), s.url+"/mcp") &&
		strings.Contains(err.Error(), "did the gateway stop")
	if !answered && !gaveUp || err != nil && strings.Contains(err.Error(), "nil response") {
		t.Errorf("CallRemote when the gateway stops: %v; want the gateway's answer that it is stopping, or an error naming the tool and the URL that asks whether the gateway stopped", err)
	}
}
