package gateway_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestRequestTimeout calls server-everything's long-running operation over
// HTTP with limits.request_timeout 2s and max_request_timeout 4s: progress
// from the upstream extends a call past the request timeout up to the
// maximum, a call without progress ends at the request timeout, and each
// failure names the limit that ended it. A pipeline's own timeout, shorter
// than both, is not reported as the request timeout.
func TestRequestTimeout(t *testing.T) {
	everything := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "slow.yaml"), `name: slow
timeout: 1s
steps:
  - id: wait
    tool: everything__trigger-long-running-operation
    with: {duration: 3, steps: 1}
`)
	vars := map[string]string{"CMD": everything[0], "ARGS": jsonArgv(everything[1:]), "DIR": dir}
	r := startGateway(t, strings.Replace(`
servers:
  everything: {command: "${CMD}", args: ${ARGS}}
pipelines: {dirs: ["${DIR}"]}
limits: {request_timeout: 2s, max_request_timeout: 4s}
`, "${ARGS}", vars["ARGS"], 1), vars)
	r.waitReady(t, "everything", "pipelines")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newRawClient(t, ctx, r.url+"/mcp", legacyVersion)
	long := func(args string) ([]byte, error) {
		return c.call(ctx, "tools/call", `{"name":"everything__trigger-long-running-operation","arguments":`+args+`}`)
	}

	t.Run("progress extends it", func(t *testing.T) {
		res, err := long(`{"duration":3,"steps":12}`)
		if err != nil || !strings.Contains(string(res), "Long running operation completed") {
			t.Errorf("3 s with progress every 0.25 s, request_timeout 2s: %s, %v; want it completed", res, err)
		}
	})
	t.Run("no progress", func(t *testing.T) {
		res, err := long(`{"duration":3,"steps":1}`)
		if err == nil || !strings.Contains(err.Error(), "limits.request_timeout") || strings.Contains(err.Error(), "max_request_timeout") {
			t.Errorf("3 s without progress, request_timeout 2s: %s, %v; want an error naming limits.request_timeout", res, err)
		}
	})
	t.Run("maximum", func(t *testing.T) {
		res, err := long(`{"duration":6,"steps":24}`)
		if err == nil || !strings.Contains(err.Error(), "limits.max_request_timeout") {
			t.Errorf("6 s with progress, max_request_timeout 4s: %s, %v; want an error naming limits.max_request_timeout", res, err)
		}
	})
	t.Run("pipeline timeout", func(t *testing.T) {
		res, err := r.gw.CallTool(ctx, "pipelines__slow", json.RawMessage(`{}`), nil)
		var msg string
		if err != nil {
			msg = err.Error()
		} else {
			msg = string(res)
		}
		if strings.Contains(msg, "request_timeout") {
			t.Errorf("a pipeline whose own timeout (1s) ended it is reported as a request timeout: %s", msg)
		}
		if err == nil && !strings.Contains(msg, `"isError":true`) {
			t.Errorf("a pipeline ended by its timeout succeeded: %s", msg)
		}
		// The run's record says why its step ended.
		runs, err := r.gw.CallTool(ctx, "pipeline__runs", json.RawMessage(`{"pipeline":"slow"}`), nil)
		if err != nil || !strings.Contains(string(runs), "wait") {
			t.Fatalf("pipeline__runs: %s, %v", runs, err)
		}
		if strings.Contains(string(runs), "request_timeout") {
			t.Errorf("the run's record blames the request timeout for the pipeline's own: %s", runs)
		}
	})
}
