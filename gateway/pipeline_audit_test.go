package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// progressCall is an sdk.Call that keeps the progress messages it is sent.
type progressCall struct {
	mu   sync.Mutex
	msgs []string
}

func (c *progressCall) Progress(p sdk.Progress) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, p.Message)
	return nil
}
func (c *progressCall) Notify(sdk.Notification) error { return nil }
func (c *progressCall) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}
func (c *progressCall) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

func (c *progressCall) messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// TestPipelineServiceWait: a pipeline whose required service is not up
// says it waits for it, in what state, and a failed wait leaves a run
// record with the failure (before, the call was silent and no run was
// kept).
func TestPipelineServiceWait(t *testing.T) {
	testenv.Docker(t)
	proj := fmt.Sprintf("gwpw%d", os.Getpid())
	r := startGateway(t, fmt.Sprintf(`
docker: {project: %s}
services:
  kv: {image: skillgate-test/kv:absent, ports: ["6379"], policy: manual}
pipelines:
  inline:
    needkv:
      requires: [kv]
      steps: [{id: s, tool: admin__servers}]
`, proj), nil)
	within(t, "pipelines__needkv served", func() bool { _, ok := r.gw.Snapshot().Tool("pipelines__needkv"); return ok })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	call := &progressCall{}
	res, err := r.gw.CallTool(ctx, "pipelines__needkv", json.RawMessage(`{}`), call)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "requires kv") {
		t.Errorf("result %s; want a failure naming kv", res)
	}
	msgs := call.messages()
	if len(msgs) == 0 || !strings.HasPrefix(msgs[0], "needkv [0/1] waiting: waiting for service kv (") {
		t.Errorf("progress %q; want first a message that the run waits for kv", msgs)
	}
	runs := r.gw.PipelineRuns()
	if len(runs) != 1 || runs[0].Pipeline != "needkv" || runs[0].Status != "failed" || !strings.Contains(runs[0].Error, "requires kv") {
		t.Errorf("runs %+v; want needkv's failed run, with why", runs)
	}
}

// TestPipelineCreateSuggests: pipeline__create refusing a step's unknown
// tool names the nearest one, as the folder's loads do.
func TestPipelineCreateSuggests(t *testing.T) {
	dir := t.TempDir()
	r := startGateway(t, fmt.Sprintf("pipelines: {dirs: [%s]}\n", dir), nil)
	got, isErr := toolText(t, r, "pipeline__create", `{"name": "p", "yaml": "steps: [{id: a, tool: admin__server}]"}`)
	if !isErr || !strings.Contains(got, `unknown tool "admin__server"; did you mean "admin__servers"?`) {
		t.Errorf("pipeline__create = %q (error %v); want the nearest tool name", got, isErr)
	}
}

// TestPipelineLoadLogFields: the load's log names its counts for what
// they count: the pipelines served, and the problems (before, pipelines=
// was the count served, beside problems=).
func TestPipelineLoadLogFields(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/good.yaml", "steps: [{id: a, tool: admin__servers}]\n")
	writeFile(t, dir+"/bad.yaml", "steps: [{id: a, tool: nope__x}]\n")
	r := startGateway(t, fmt.Sprintf("pipelines: {dirs: [%s]}\n", dir), nil)
	within(t, "the problem logged", func() bool { return strings.Contains(r.log.String(), "pipelines with problems are not served") })
	if want := `msg="pipelines with problems are not served" served=1 problems=1 `; !strings.Contains(r.log.String(), want) {
		t.Errorf("log\n%s\nwant a line with %s", r.log.String(), want)
	}
}

// TestToolRequiresUnknownService: a tool.yaml whose requires names a
// service the config lacks is an invalid tool folder, with file:line and
// the nearest name, not a call failing later; once the config has the
// service, the folder loads.
func TestToolRequiresUnknownService(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/hello", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir+"/hello/tool.yaml", "name: hello\ndescription: Say hello.\nruntime: bash\nentry: hello.sh\nrequires: [sik]\n")
	writeFile(t, dir+"/hello/hello.sh", "echo hello\n")
	cfg := fmt.Sprintf("tools: {dirs: [%s]}\nservices:\n  sick: {image: redis:7, policy: manual}\n", dir)
	r := startGateway(t, cfg, nil)
	var st gateway.SourceStatus
	for name, s := range r.status(t) {
		if strings.Contains(name, "hello") {
			st = s
		}
	}
	if want := dir + `/hello/tool.yaml:5:1: requires[0]: unknown service "sik"; did you mean "sick"?`; st.State != "invalid" || !strings.Contains(st.LastError, want) {
		t.Errorf("hello: %+v; want invalid with %s", st, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.reloadAndWait(t, ctx, strings.Replace(cfg, "sick:", "sik:", 1), nil, "tools__hello")

	// A config with no services at all knows none of them.
	r = startGateway(t, fmt.Sprintf("tools: {dirs: [%s]}\n", dir), nil)
	st = gateway.SourceStatus{}
	for name, s := range r.status(t) {
		if strings.Contains(name, "hello") {
			st = s
		}
	}
	if want := `requires[0]: unknown service "sik"; define it under services:`; st.State != "invalid" || !strings.Contains(st.LastError, want) {
		t.Errorf("hello with no services configured: %+v; want invalid with %s", st, want)
	}
}
