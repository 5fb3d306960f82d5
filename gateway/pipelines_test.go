package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/pipelines"
)

// pipelineGateway serves server-everything, the conformance server and a
// pipelines folder holding a copy of examples/pipelines plus extra files.
func pipelineGateway(t *testing.T, extra map[string]string) (*running, string) {
	r, dir, _ := pipelineGatewayVars(t, extra)
	return r, dir
}

// pipelineConfig is pipelineGateway's config, with more servers.
func pipelineConfig(vars map[string]string, moreServers string) string {
	return strings.Replace(`
servers:
  everything:
    command: ${CMD}
    args: ${ARGS}
  conformance:
    url: ${CONF_URL}
`+moreServers+`
pipelines:
  dirs: ["${DIR}"]
admin: {writes: all}  # the management tests' clients write over HTTP without a token
`, "${ARGS}", vars["ARGS"], 1)
}

// reloadAndWait reloads r's gateway with yaml, its ${VARS} taken from
// vars, and waits until the gateway serves tool.
func (r *running) reloadAndWait(t *testing.T, ctx context.Context, yaml string, vars map[string]string, tool string) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml), "test.yaml", func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool(tool); return ok })
}

func pipelineGatewayVars(t *testing.T, extra map[string]string) (*running, string, map[string]string) {
	t.Helper()
	everything := testenv.NodeServer(t, "server-everything")
	confURL := testenv.ConformanceServer(t)
	dir := t.TempDir()
	examples := filepath.Join(testenv.RepoRoot(t), "examples", "pipelines")
	entries, err := os.ReadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(examples, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, e.Name()), string(b))
	}
	for name, body := range extra {
		writeFile(t, filepath.Join(dir, name), body)
	}
	vars := map[string]string{"CMD": everything[0], "ARGS": jsonArgv(everything[1:]), "CONF_URL": confURL, "DIR": dir}
	r := startGateway(t, pipelineConfig(vars, ""), vars)
	r.waitReady(t, "everything", "conformance")
	return r, dir, vars
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A pipeline over both real upstreams, one calling another pipeline, and
// two calling each other (held back at load).
const (
	mixedYAML = `name: mixed
description: Text from the conformance server, echoed by server-everything, then fanned out by another pipeline.
steps:
  - id: text
    tool: conformance__test_simple_text
  - id: echo
    tool: everything__echo
    with: {message: "${{ steps.text.outputs }}"}
  - id: fan
    tool: pipelines__echo_fanout
    with: {messages: ["${{ steps.echo.outputs }}", "two"]}
outputs:
  echo: ${{ steps.echo.outputs }}
  fan: ${{ steps.fan.outputs.echoes }}
`
	pingYAML = `name: ping
steps:
  - {id: pong, tool: pipelines__pong}
`
	pongYAML = `name: pong
steps:
  - {id: ping, tool: pipelines__ping}
`
)

// TestPipelinesThroughGateway runs the examples and a mixed pipeline from
// mcp-go's client in both protocol eras, against real upstreams, with
// per-step progress; runs are recorded. (A recursion at run time is
// refused with the chain: TestPipelineChainThroughScript.)
func TestPipelinesThroughGateway(t *testing.T) {
	r, _ := pipelineGateway(t, map[string]string{"mixed.yaml": mixedYAML})
	st := r.waitReady(t, "pipelines")
	if st["pipelines"].Tools != 4 || len(st["pipelines"].Problems) != 0 {
		t.Fatalf("pipelines status: %+v", st["pipelines"])
	}
	for _, era := range []string{legacy, mcp.LATEST_PROTOCOL_VERSION} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			gc := newGoClient(t, ctx, r.url+"/mcp", era)
			list, err := gc.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var fanout *mcp.Tool
			for i, tl := range list.Tools {
				if tl.Name == "pipelines__echo_fanout" {
					fanout = &list.Tools[i]
				}
			}
			if fanout == nil {
				t.Fatal("pipelines__echo_fanout not listed")
			}
			if !slices.Contains(fanout.InputSchema.Required, "messages") || fanout.OutputSchema.Type != "object" {
				t.Errorf("echo_fanout schemas: in %+v out %+v", fanout.InputSchema, fanout.OutputSchema)
			}

			res := gc.call(t, ctx, "pipelines__echo_fanout", map[string]any{"messages": []any{"a", "b", "c", "d"}}, "fan-"+era)
			want := `{"echoes":["Echo: msg 1: a","Echo: msg 2: b","Echo: msg 3: c","Echo: msg 4: d"],"summary":"Echo: 4 messages echoed"}`
			if res.IsError || mustJSON(t, res.StructuredContent) != want {
				t.Errorf("echo_fanout: %s %s", mustJSON(t, res.StructuredContent), resultText(res))
			}
			gc.mu.Lock()
			prog := slices.Clone(gc.prog)
			gc.mu.Unlock()
			// started + finished for 2 steps, and one per item.
			if len(prog) < 8 || !slices.IsSorted(prog) || prog[len(prog)-1] != 2 {
				t.Errorf("progress = %v, want >= 8 increasing values ending at 2 (of 2 steps)", prog)
			}
			for i := 1; i < len(prog); i++ {
				if prog[i] == prog[i-1] {
					t.Errorf("progress repeats %v: %v", prog[i], prog)
				}
			}

			res = gc.call(t, ctx, "pipelines__sum_list", map[string]any{"numbers": []any{1, 2, 3, 4}, "offset": 10}, nil)
			if got := mustJSON(t, res.StructuredContent); res.IsError || !strings.Contains(got, `"each":[11,12,13,14]`) || !strings.Contains(got, `"total":50`) {
				t.Errorf("sum_list: %s %s", got, resultText(res))
			}
			res = gc.call(t, ctx, "pipelines__city_weather", map[string]any{"city": "Chicago"}, nil)
			if got := mustJSON(t, res.StructuredContent); res.IsError || !strings.Contains(got, `"has_forecast":true`) || !strings.Contains(got, "Chicago: ") {
				t.Errorf("city_weather Chicago: %s %s", got, resultText(res))
			}
			res = gc.call(t, ctx, "pipelines__city_weather", map[string]any{"city": "Oslo"}, nil)
			if got := mustJSON(t, res.StructuredContent); res.IsError || !strings.Contains(got, `No forecast for Oslo`) {
				t.Errorf("city_weather Oslo: %s %s", got, resultText(res))
			}

			res = gc.call(t, ctx, "pipelines__mixed", nil, nil)
			if got := mustJSON(t, res.StructuredContent); res.IsError || !strings.Contains(got, `"echo":"Echo: This is a simple text response for testing."`) ||
				!strings.Contains(got, `"Echo: msg 2: two"`) {
				t.Errorf("mixed: %s %s", got, resultText(res))
			}
		})
	}
	runs := r.gw.PipelineRuns()
	if len(runs) < 12 {
		t.Fatalf("%d runs recorded", len(runs))
	}
	var mixed *pipelines.Record
	for i := range runs {
		if runs[i].Pipeline == "mixed" && mixed == nil {
			mixed = &runs[i]
		}
	}
	if mixed == nil || mixed.Status != pipelines.StatusSucceeded || len(mixed.Steps) != 3 || mixed.Steps[2].Duration <= 0 {
		t.Fatalf("mixed run record: %+v", mixed)
	}
	if rec, ok := r.gw.PipelineRun(mixed.ID); !ok || rec.ID != mixed.ID {
		t.Errorf("PipelineRun(%s) = %+v, %v", mixed.ID, rec, ok)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPipelineCancelMidFanOut: a client cancels a run while a fan-out of
// long operations is in flight; the run ends canceled with no step still
// running, and the upstream keeps serving.
func TestPipelineCancelMidFanOut(t *testing.T) {
	r, _ := pipelineGateway(t, map[string]string{"slow.yaml": `name: slow
inputs: {type: object, properties: {n: {type: integer, default: 6}}}
steps:
  - id: wait
    for_each: ${{ 1..inputs.n }}
    concurrency: 3
    tool: everything__trigger-long-running-operation
    with: {duration: 60, steps: 60}
  - id: after
    tool: everything__echo
    with: {message: "done ${{ len(steps.wait.outputs) }}"}
`})
	r.waitReady(t, "pipelines")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)

	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "pipelines__slow"
		req.Params.Meta = &mcp.Meta{ProgressToken: "slow"}
		_, err := gc.CallTool(callCtx, req)
		done <- err
	}()
	// Wait until three items are in flight.
	var rec pipelines.Record
	waitFor(t, func() bool {
		for _, rr := range r.gw.PipelineRuns() {
			if rr.Pipeline == "slow" && rr.Steps[0].Calls == 3 {
				rec = rr
				return true
			}
		}
		return false
	})
	stop()
	if err := <-done; err == nil {
		t.Fatal("the canceled call returned a result")
	}
	waitFor(t, func() bool {
		rec, _ = r.gw.PipelineRun(rec.ID)
		return rec.Status != pipelines.StatusRunning
	})
	if rec.Status != pipelines.StatusCanceled {
		t.Fatalf("run: %+v", rec)
	}
	for _, s := range rec.Steps {
		if s.Status == pipelines.StatusRunning || s.Status == pipelines.StatusPending {
			t.Errorf("step %s is %s after the run ended", s.ID, s.Status)
		}
	}
	if rec.Steps[0].Calls != 3 || rec.Steps[1].Calls != 0 {
		t.Errorf("after cancel: wait made %d calls, after %d; want 3 and 0", rec.Steps[0].Calls, rec.Steps[1].Calls)
	}
	res := gc.call(t, ctx, "everything__echo", map[string]any{"message": "still here"}, nil)
	if !strings.Contains(resultText(res), "still here") {
		t.Errorf("upstream after cancel: %s", resultText(res))
	}
}

// TestPipelineLoadErrors: a broken file is reported with file:line in
// Status and /readyz while the good pipelines are served, and so are a
// default that breaks its own schema and two pipelines calling each other;
// a pipeline naming a tool of a server that is not there yet is held back
// until a config reload brings the server; fixing a file on disk is picked
// up by the folder poll.
func TestPipelineLoadErrors(t *testing.T) {
	r, dir, vars := pipelineGatewayVars(t, map[string]string{
		"broken.yaml":   "name: broken\nsteps:\n  - id: a\n    tool: everything__echo\n    with: {message: \"${{ steps.nosuch.outputs }}\"}\n",
		"defaults.yaml": "inputs:\n  type: object\n  properties:\n    n: {type: integer, default: abc}\nsteps: [{id: a, tool: everything__echo, with: {message: hi}}]\n",
		"later.yaml":    "name: later\nsteps:\n  - {id: a, tool: late__test_simple_text}\n",
		"ping.yaml":     pingYAML,
		"pong.yaml":     pongYAML,
	})
	st := r.status(t)["pipelines"]
	if st.State != "invalid" || st.Tools != 3 || len(st.Problems) != 5 {
		t.Fatalf("status: %+v", st)
	}
	broken := filepath.Join(dir, "broken.yaml")
	for i, want := range []struct{ at, has string }{
		{broken + ":5:", `unknown step "nosuch"`},
		{filepath.Join(dir, "defaults.yaml") + ":4:33: inputs.properties.n.default:", `the default "abc" does not fit its own schema`},
		{filepath.Join(dir, "later.yaml") + ":3:", "late__test_simple_text"},
		{filepath.Join(dir, "ping.yaml") + ":3:", "pipelines__ping calls itself through pipelines__pong: pipelines__ping -> pipelines__pong (at " + filepath.Join(dir, "ping.yaml") + ":3:"},
		{filepath.Join(dir, "pong.yaml") + ":3:", "pipelines__pong calls itself through pipelines__ping"},
	} {
		if !strings.HasPrefix(st.Problems[i], want.at) || !strings.Contains(st.Problems[i], want.has) {
			t.Errorf("problem %d: %s\nwant %s...%s", i+1, st.Problems[i], want.at, want.has)
		}
	}
	if !strings.Contains(st.LastError, "and 4 more") {
		t.Errorf("last error: %s", st.LastError)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Calling a pipeline that is held back quotes its own problems, not
	// the first of the folder's.
	_, err := r.gw.CallTool(ctx, "pipelines__pong", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `pipeline "pong" has problems and is not served: `+filepath.Join(dir, "pong.yaml")+":3:") || strings.Contains(err.Error(), "broken.yaml") {
		t.Errorf("calling held-back pong: %v", err)
	}
	if res, err := r.gw.CallTool(ctx, "pipelines__echo_fanout", json.RawMessage(`{"messages":["x"]}`), nil); err != nil || strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("a good pipeline next to broken ones: %s %v", res, err)
	}

	// The server arrives with a config reload; later compiles.
	r.reloadAndWait(t, ctx, pipelineConfig(vars, "  late:\n    url: ${CONF_URL}\n"), vars, "pipelines__later")
	res, err := r.gw.CallTool(ctx, "pipelines__later", nil, nil)
	if err != nil || !strings.Contains(string(res), "simple text response") {
		t.Fatalf("later: %s %v", res, err)
	}

	// Fixed on disk.
	writeFile(t, broken, "name: broken\nsteps:\n  - id: a\n    tool: everything__echo\n    with: {message: fixed}\n")
	writeFile(t, filepath.Join(dir, "defaults.yaml"), "steps: [{id: a, tool: everything__echo, with: {message: hi}}]\n")
	writeFile(t, filepath.Join(dir, "pong.yaml"), "name: pong\nsteps:\n  - {id: a, tool: everything__echo, with: {message: pong}}\n")
	waitFor(t, func() bool { return r.status(t)["pipelines"].State == "ready" })
	if st := r.status(t)["pipelines"]; st.Tools != 8 || st.LastError != "" {
		t.Errorf("after the fix: %+v", st)
	}
	// The status is told before the catalog is published.
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("pipelines__ping"); return ok })
	if res, err := r.gw.CallTool(ctx, "pipelines__ping", nil, nil); err != nil || !strings.Contains(string(res), "Echo: pong") {
		t.Errorf("ping after the loop is gone: %s %v", res, err)
	}
}

// TestPipelineManagement: the @pipeline tools create, show, update, list,
// run-history and delete a pipeline through a client, validating first
// (alone, then with every other pipeline) and saving atomically into the
// pipelines folder.
func TestPipelineManagement(t *testing.T) {
	r, dir := pipelineGateway(t, map[string]string{"other.yaml": "name: taken\nsteps:\n  - {id: a, tool: everything__nosuch}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	if res := gc.call(t, ctx, "activate", map[string]any{"targets": []any{"@pipeline"}}, nil); res.IsError {
		t.Fatalf("activate @pipeline: %s", resultText(res))
	}
	names := gc.names(t, ctx)
	for _, want := range []string{"pipeline__create", "pipeline__update", "pipeline__delete", "pipeline__list", "pipeline__get", "pipeline__runs"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not listed after activating @pipeline", want)
		}
	}

	bad := "steps:\n  - id: a\n    tool: everything__echo\n    with: {mesage: \"${{ inputs.who }}\"}\n  - {id: b, tool: everything__nosuch}\n"
	res := gc.call(t, ctx, "pipeline__create", map[string]any{"name": "hello", "yaml": bad}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "hello.yaml:5:") || !strings.Contains(resultText(res), "everything__nosuch") {
		t.Errorf("create with problems: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.yaml")); !os.IsNotExist(err) {
		t.Fatalf("a pipeline with problems was saved: %v", err)
	}
	res = gc.call(t, ctx, "pipeline__create", map[string]any{"name": "../escape", "yaml": "steps: []"}, nil)
	if !res.IsError {
		t.Errorf("create ../escape: %s", resultText(res))
	}

	good := "description: greet\ninputs: {type: object, properties: {who: {type: string}}}\nsteps:\n  - id: a\n    tool: everything__echo\n    with: {message: \"hello ${{ inputs.who }}\"}\noutputs: {greeting: \"${{ steps.a.outputs }}\"}\n"
	res = gc.call(t, ctx, "pipeline__create", map[string]any{"name": "hello", "yaml": good}, nil)
	if res.IsError || !strings.Contains(resultText(res), "created pipelines__hello") {
		t.Fatalf("create: %s", resultText(res))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.yaml")); err != nil || string(b) != good {
		t.Fatalf("saved file: %q %v", b, err)
	}
	res = gc.call(t, ctx, "pipelines__hello", map[string]any{"who": "ann"}, nil)
	if got := mustJSON(t, res.StructuredContent); got != `{"greeting":"Echo: hello ann"}` {
		t.Errorf("pipelines__hello: %s %s", got, resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__create", map[string]any{"name": "hello", "yaml": good}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "already exists") {
		t.Errorf("second create: %s", resultText(res))
	}

	res = gc.call(t, ctx, "pipeline__update", map[string]any{"name": "hello", "yaml": strings.Replace(good, "hello ", "hi ", 1)}, nil)
	if res.IsError {
		t.Fatalf("update: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipelines__hello", map[string]any{"who": "bo"}, nil)
	if got := mustJSON(t, res.StructuredContent); got != `{"greeting":"Echo: hi bo"}` {
		t.Errorf("after update: %s %s", got, resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__update", map[string]any{"name": "hello", "yaml": "name: other\nsteps: [{id: a, tool: everything__echo}]\n"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), `name: is "other"`) {
		t.Errorf("update with another name: %s", resultText(res))
	}

	res = gc.call(t, ctx, "pipeline__get", map[string]any{"name": "hello"}, nil)
	if res.IsError || !strings.Contains(resultText(res), "hi ${{ inputs.who }}") || !strings.Contains(mustJSON(t, res.StructuredContent), "flowchart") {
		t.Errorf("get: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__list", nil, nil)
	if res.IsError || !strings.Contains(resultText(res), "pipelines__hello (hello, 1 steps)") || !strings.Contains(resultText(res), "pipelines__echo_fanout") {
		t.Errorf("list: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__runs", map[string]any{"pipeline": "hello"}, nil)
	var runs struct {
		Runs []pipelines.Record `json:"runs"`
	}
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &runs); err != nil || len(runs.Runs) != 2 || runs.Runs[0].Steps[0].Status != "succeeded" {
		t.Fatalf("runs: %s %v", resultText(res), err)
	}
	res = gc.call(t, ctx, "pipeline__runs", map[string]any{"id": runs.Runs[1].ID}, nil)
	if res.IsError || !strings.Contains(resultText(res), "run "+runs.Runs[1].ID+" of hello: succeeded") {
		t.Errorf("one run: %s", resultText(res))
	}
	// A pipeline name that names none is an error, with the nearest
	// name, not "no runs yet"; a served one that has not run is fine.
	res = gc.call(t, ctx, "pipeline__runs", map[string]any{"pipeline": "helo"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), `no pipeline is named "helo"; did you mean "hello"?`) {
		t.Errorf("runs of a pipeline that does not exist: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__runs", map[string]any{"pipeline": "echo_fanout"}, nil)
	if res.IsError {
		t.Errorf("runs of a served pipeline that has not run: %s", resultText(res))
	}

	// A name another file uses is refused, served or not.
	res = gc.call(t, ctx, "pipeline__create", map[string]any{"name": "taken", "yaml": "steps: [{id: a, tool: everything__echo, with: {message: hi}}]\n"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), `pipeline "taken" is also defined at `+filepath.Join(dir, "other.yaml")+":1:7") {
		t.Errorf("create over a name another file uses: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "taken.yaml")); !os.IsNotExist(err) {
		t.Errorf("taken.yaml was saved: %v", err)
	}

	// Arguments the tool's input schema does not have are warnings: the
	// pipeline is saved and served, and pipeline__list shows them.
	res = gc.call(t, ctx, "pipeline__create", map[string]any{"name": "typo", "yaml": "steps:\n  - {id: a, tool: everything__echo, with: {mesage: hi}}\n"}, nil)
	typo := `typo.yaml:2:44: warning: steps[0].with.mesage: everything__echo has no argument "mesage" in its input schema; did you mean "message"?`
	if res.IsError || !strings.Contains(resultText(res), "created pipelines__typo") || !strings.Contains(resultText(res), typo) {
		t.Errorf("create with a misspelt argument: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__list", nil, nil)
	if !strings.Contains(mustJSON(t, res.StructuredContent), `"warnings":["`+filepath.Join(dir, "typo.yaml")) {
		t.Errorf("list: %s", mustJSON(t, res.StructuredContent))
	}
	if st := r.status(t)["pipelines"]; !slices.ContainsFunc(st.Problems, func(p string) bool { return strings.HasSuffix(p, typo) }) {
		t.Errorf("status: %+v", st)
	}

	// A change that closes a loop of pipelines, or that a served caller's
	// arguments no longer fit, is refused, and nothing changes.
	for _, c := range []struct{ name, yaml string }{
		{"ca", "steps:\n  - {id: a, tool: everything__echo, with: {message: from ca}}\n"},
		{"cb", "steps:\n  - {id: b, tool: pipelines__ca}\n"},
	} {
		if res := gc.call(t, ctx, "pipeline__create", map[string]any{"name": c.name, "yaml": c.yaml}, nil); res.IsError {
			t.Fatalf("create %s: %s", c.name, resultText(res))
		}
	}
	res = gc.call(t, ctx, "pipeline__update", map[string]any{"name": "ca", "yaml": "steps:\n  - {id: a, tool: pipelines__cb}\n"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "pipelines__ca calls itself through pipelines__cb") {
		t.Errorf("update closing a loop: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipeline__update", map[string]any{"name": "ca", "yaml": "inputs: {type: object, properties: {who: {type: string}}, required: [who]}\nsteps:\n  - {id: a, tool: everything__echo, with: {message: \"${{ inputs.who }}\"}}\n"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "not saved: cb ("+filepath.Join(dir, "cb.yaml")+":1:1) would no longer be served") ||
		!strings.Contains(resultText(res), "pipelines__ca requires the argument who") {
		t.Errorf("update breaking a caller: %s", resultText(res))
	}
	res = gc.call(t, ctx, "pipelines__cb", nil, nil)
	if got := mustJSON(t, res.StructuredContent); res.IsError || !strings.Contains(got, "Echo: from ca") {
		t.Errorf("cb after the refused updates: %s %s", got, resultText(res))
	}
	for _, name := range []string{"cb", "ca", "typo"} {
		if res := gc.call(t, ctx, "pipeline__delete", map[string]any{"name": name}, nil); res.IsError {
			t.Fatalf("delete %s: %s", name, resultText(res))
		}
	}

	res = gc.call(t, ctx, "pipeline__delete", map[string]any{"name": "hello"}, nil)
	if res.IsError || !strings.Contains(resultText(res), "deleted pipelines__hello") {
		t.Fatalf("delete: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.yaml")); !os.IsNotExist(err) {
		t.Errorf("file still there: %v", err)
	}
	if slices.Contains(gc.names(t, ctx), "pipelines__hello") {
		t.Error("pipelines__hello still listed after delete")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("folder holds %d files, want the 3 examples and other.yaml (no temporary files left)", len(entries))
	}
}

// TestExamplePipelinesInspector validates the bundled examples as the
// gateway loads them and runs each with MCP Inspector through the gateway.
func TestExamplePipelinesInspector(t *testing.T) {
	r := startEverythingWith(t, `pipelines:
  dirs: ["${DIR}"]
`, map[string]string{"DIR": filepath.Join(testenv.RepoRoot(t), "examples", "pipelines")})
	st := r.waitReady(t, "everything", "pipelines")
	if st["pipelines"].Tools != 3 {
		t.Fatalf("examples: %+v", st["pipelines"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, tc := range []struct{ tool, args, want string }{
		{"pipelines__echo_fanout", `{"messages":["a","b"]}`, `"summary": "Echo: 2 messages echoed"`},
		{"pipelines__sum_list", `{"numbers":[1,2,3],"offset":1}`, `"total": 9`},
		{"pipelines__city_weather", `{"city":"New York"}`, `"has_forecast": true`},
	} {
		out, err := testenv.Inspector(t, ctx, r.url+"/mcp", "--method", "tools/call", "--tool-name", tc.tool, "--tool-args-json", tc.args)
		if err != nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %v\n%s", tc.tool, err, out)
		}
	}
}

// callbackPy is a jsonrpc script tool that calls the tool named in its
// arguments back through the gateway and returns that tool's result.
const callbackPy = `import json, sys
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") != "tools/call":
        continue
    args = msg["params"]["arguments"]
    send({"id": "c1", "method": "tools/call", "params": {"name": args["tool"], "arguments": args.get("arguments", {})}})
    for answer in sys.stdin:
        a = json.loads(answer)
        if a.get("id") == "c1":
            break
    res = a.get("result") or {"content": [{"type": "text", "text": json.dumps(a.get("error"))}], "isError": True}
    send({"id": msg["id"], "result": res})
`

// callbackToolDir writes a tools folder holding the Python tool callback
// (callbackPy: it calls the gateway tool it is given back through the
// host) and returns the folder.
func callbackToolDir(t *testing.T) string {
	t.Helper()
	tools := t.TempDir()
	if err := os.Mkdir(filepath.Join(tools, "callback"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tools, "callback", "tool.yaml"), `name: callback
description: Call a tool of the gateway and return its result.
runtime: python
entry: callback.py
protocol: jsonrpc
input_schema:
  type: object
  properties: {tool: {type: string}, arguments: {type: object}}
  required: [tool]
`)
	writeFile(t, filepath.Join(tools, "callback", "callback.py"), callbackPy)
	return tools
}

// TestPipelineChainThroughScript: the call-chain guard holds across an
// out-of-process executor calling back: a pipeline calls a script, which
// calls the pipeline again, and that call is refused with the whole
// chain; a script calling an ordinary tool from a pipeline works.
func TestPipelineChainThroughScript(t *testing.T) {
	tools := callbackToolDir(t)
	r, _, vars := pipelineGatewayVars(t, map[string]string{"loop.yaml": `name: loop
inputs: {type: object, properties: {target: {type: string, default: pipelines__loop}}}
steps:
  - id: call
    tool: tools__callback
    with: {tool: "${{ inputs.target }}", arguments: {message: via script}}
outputs: {result: "${{ steps.call.outputs }}"}
`})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.reloadAndWait(t, ctx, pipelineConfig(vars, "")+"tools:\n  dirs: [\""+tools+"\"]\n", vars, "pipelines__loop")

	res, err := r.gw.CallTool(ctx, "pipelines__loop", json.RawMessage(`{"target":"everything__echo"}`), nil)
	if err != nil || !strings.Contains(string(res), `"result":"Echo: via script"`) {
		t.Fatalf("loop through the script to echo: %s %v", res, err)
	}
	res, err = r.gw.CallTool(ctx, "pipelines__loop", nil, nil)
	res = json.RawMessage(strings.ReplaceAll(string(res), `\u003e`, ">"))
	if err != nil || !strings.Contains(string(res), `"isError":true`) ||
		!strings.Contains(string(res), "refusing to call pipelines__loop: it is already running in this call chain (pipelines__loop -> tools__callback -> pipelines__loop)") {
		t.Fatalf("recursion through the script: %s %v", res, err)
	}
}

// TestInlinePipelines: pipelines written in skillgate.yaml are served, and
// their problems carry the config file's line numbers.
func TestInlinePipelines(t *testing.T) {
	r := startGateway(t, `
pipelines:
  inline:
    status:
      description: How many sources the gateway has
      steps:
        - {id: s, tool: admin__servers}
      outputs: {sources: "${{ len(steps.s.outputs.servers) }}"}
    bad:
      steps:
        - {id: s, tool: admin__nosuch}
`, nil)
	st := r.status(t)["pipelines"]
	if st.State != "invalid" || st.Tools != 1 || len(st.Problems) != 1 || !strings.HasPrefix(st.Problems[0], "test.yaml:11:25: bad.steps[0].tool: ") || !strings.Contains(st.Problems[0], "admin__nosuch") {
		t.Fatalf("status: %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.gw.CallTool(ctx, "pipelines__status", nil, nil)
	if err != nil || !strings.Contains(string(res), `"structuredContent":{"sources":1}`) {
		t.Fatalf("pipelines__status: %s %v", res, err)
	}
}

// TestLongPipelineName: a pipeline whose served name the catalog shortens
// (over 64 characters with its namespace) is known to the other pipelines
// of its batch by that shortened name, and runs through it.
func TestLongPipelineName(t *testing.T) {
	long := strings.Repeat("p", 60)
	served := catalog.ExposedName("pipelines", "__", long)
	if len(served) > 64 || served == "pipelines__"+long {
		t.Fatalf("served name %q: want a shortened one", served)
	}
	r := startGateway(t, `
pipelines:
  inline:
    `+long+`:
      steps:
        - {id: s, tool: admin__servers}
      outputs: {n: "${{ len(steps.s.outputs.servers) }}"}
    caller:
      steps:
        - {id: inner, tool: `+served+`}
      outputs: {n: "${{ steps.inner.outputs.n }}"}
`, nil)
	if st := r.status(t)["pipelines"]; st.State != "ready" || st.Tools != 2 {
		t.Fatalf("status: %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.gw.CallTool(ctx, "pipelines__caller", nil, nil)
	if err != nil || !strings.Contains(string(res), `"structuredContent":{"n":1}`) {
		t.Fatalf("pipelines__caller: %s %v", res, err)
	}
}

// TestPipelineStepProgress: what a step's tool reports while it runs
// (server-everything's long-running operation) reaches a client that sent
// a progress token as progress of the pipeline, each with a message naming
// the step, also through a pipeline calling that pipeline; the progress
// only increases.
func TestPipelineStepProgress(t *testing.T) {
	r, _ := pipelineGateway(t, map[string]string{
		"slow.yaml":  "name: slow\nsteps:\n  - id: wait\n    tool: everything__trigger-long-running-operation\n    with: {duration: 1, steps: 4}\n",
		"outer.yaml": "name: outer\nsteps:\n  - {id: inner, tool: pipelines__slow}\n",
	})
	r.waitReady(t, "pipelines")
	for _, era := range []string{legacy, mcp.LATEST_PROTOCOL_VERSION} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			gc := newGoClient(t, ctx, r.url+"/mcp", era)
			var (
				mu     sync.Mutex
				msgs   []string
				values []float64
			)
			gc.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method != string(mcp.MethodNotificationProgress) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				msg, _ := n.Params.AdditionalFields["message"].(string)
				v, _ := n.Params.AdditionalFields["progress"].(float64)
				msgs, values = append(msgs, msg), append(values, v)
			})
			res := gc.call(t, ctx, "pipelines__outer", nil, "outer-"+era)
			if res.IsError {
				t.Fatalf("outer: %s", resultText(res))
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{"outer [0/1] inner started", "outer [0/1] inner progress 0/1: slow [0/1] wait started"}
			for i := 1; i <= 4; i++ {
				want = append(want, fmt.Sprintf("outer [0/1] inner progress %s/1: slow [0/1] wait progress %d/4", []string{"0.25", "0.5", "0.75", "1"}[i-1], i))
			}
			want = append(want, "outer [0/1] inner progress 1/1: slow [1/1] wait finished", "outer [1/1] inner finished")
			if !slices.Equal(msgs, want) {
				t.Errorf("progress messages\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
			}
			for i := 1; i < len(values); i++ {
				if values[i] <= values[i-1] {
					t.Errorf("progress does not increase: %v", values)
					break
				}
			}
		})
	}
	// Without a progress token, the same call works and nothing is sent.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", legacy)
	if res := gc.call(t, ctx, "pipelines__outer", nil, nil); res.IsError || gc.notified(string(mcp.MethodNotificationProgress)) != 0 {
		t.Errorf("without a token: %s, %d progress notifications", resultText(res), gc.notified(string(mcp.MethodNotificationProgress)))
	}
}

// gatePy is a simple-protocol script tool that reports progress until the
// file named in its arguments exists, then returns.
const gatePy = `import json, os, sys, time
args = json.load(sys.stdin)
n = 0
while not os.path.exists(args["path"]):
    n += 1
    print(json.dumps({"progress": n, "message": "waiting"}), file=sys.stderr, flush=True)
    time.sleep(0.1)
print("open")
`

// TestPipelineStepToolGone: a step whose tool left the catalog while the
// run was on its way (here a pipeline deleted mid-run) fails as a call of
// an unknown tool fails anywhere in the gateway, with the same message.
func TestPipelineStepToolGone(t *testing.T) {
	tools := t.TempDir()
	if err := os.Mkdir(filepath.Join(tools, "gate"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tools, "gate", "tool.yaml"), `name: gate
description: Wait until a file exists.
runtime: python
entry: gate.py
input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
`)
	writeFile(t, filepath.Join(tools, "gate", "gate.py"), gatePy)
	open := filepath.Join(t.TempDir(), "open")
	r, dir, vars := pipelineGatewayVars(t, map[string]string{
		"victim.yaml": "name: victim\nsteps: [{id: a, tool: everything__echo, with: {message: hi}}]\n",
		"gone.yaml":   "name: gone\nsteps:\n  - {id: wait, tool: tools__gate, with: {path: \"" + open + "\"}}\n  - {id: call, tool: pipelines__victim, needs: [wait]}\n",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.reloadAndWait(t, ctx, pipelineConfig(vars, "")+"tools:\n  dirs: [\""+tools+"\"]\n", vars, "pipelines__gone")

	done := make(chan json.RawMessage, 1)
	go func() {
		res, err := r.gw.CallTool(ctx, "pipelines__gone", nil, nil)
		if err != nil {
			res = json.RawMessage(err.Error())
		}
		done <- res
	}()
	waitFor(t, func() bool {
		for _, rr := range r.gw.PipelineRuns() {
			if rr.Pipeline == "gone" && rr.Steps[0].Status == pipelines.StatusRunning {
				return true
			}
		}
		return false
	})
	if err := os.Remove(filepath.Join(dir, "victim.yaml")); err != nil {
		t.Fatal(err)
	}
	r.gw.ReloadPipelines(ctx)
	if _, ok := r.gw.Snapshot().Tool("pipelines__victim"); ok {
		t.Fatal("pipelines__victim is still in the catalog")
	}
	writeFile(t, open, "")
	res := <-done
	_, want := r.gw.CallTool(ctx, "pipelines__victim", nil, nil)
	if want == nil || !strings.Contains(string(res), `"isError":true`) ||
		!strings.Contains(string(res), "step call (pipelines__victim) failed: "+jsonText(t, want.Error())) {
		t.Errorf("got %s\nwant the error of a call of an unknown tool: %v", res, want)
	}
}

// jsonText is s as it reads inside a JSON string.
func jsonText(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(b), `"`)
}

// TestPipelineWaitsOnServer: a step calling a tool in the namespace of a
// configured server that failed is a problem naming that server and its
// last error, not an unknown tool; once the server is ready the pipeline
// is compiled again and served.
func TestPipelineWaitsOnServer(t *testing.T) {
	everything := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	gate := filepath.Join(dir, "go") // late starts once this file exists
	pipes := filepath.Join(dir, "pipelines")
	if err := os.Mkdir(pipes, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(pipes, "b.yaml"), "name: usebroken\nsteps:\n  - {id: a, tool: broken__x}\ndescription: Calls broken.\n")
	writeFile(t, filepath.Join(pipes, "l.yaml"), "name: uselate\nsteps:\n  - {id: a, tool: late__echo, with: {message: hi}}\ndescription: Calls late.\n")
	late := jsonArgv(append([]string{"-c", `test -e "$0" || { echo "not yet" >&2; exit 3; }; exec "$@"`, gate}, everything...))
	r := startGateway(t, `
servers:
  broken:
    command: sh
    args: ["-c", "echo boom >&2; exit 3"]
  late:
    command: sh
    args: `+late+`
pipelines:
  dirs: ["`+pipes+`"]
`, nil)

	var st gateway.SourceStatus
	waitFor(t, func() bool {
		st = r.status(t)["pipelines"]
		return len(st.Problems) == 2
	})
	for i, want := range []string{
		filepath.Join(pipes, "b.yaml") + ":3:19: steps[0].tool: broken__x: server broken is failed: ",
		filepath.Join(pipes, "l.yaml") + ":3:19: steps[0].tool: late__echo: server late is failed: ",
	} {
		if !strings.HasPrefix(st.Problems[i], want) || strings.Contains(st.Problems[i], "unknown tool") {
			t.Errorf("problem %d: %s\nwant %s<its last error>", i+1, st.Problems[i], want)
		}
	}
	if st.State != "invalid" || !strings.Contains(st.Problems[0], "boom") || !strings.Contains(st.Problems[1], "not yet") {
		t.Errorf("status: %+v", st)
	}

	writeFile(t, gate, "")
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("pipelines__uselate"); return ok })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res, err := r.gw.CallTool(ctx, "pipelines__uselate", nil, nil); err != nil || !strings.Contains(string(res), "Echo: hi") {
		t.Fatalf("uselate once late is ready: %s %v", res, err)
	}
	if st := r.status(t)["pipelines"]; len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "server broken is failed") {
		t.Errorf("after late is ready: %+v", st)
	}
}
