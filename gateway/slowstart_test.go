package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSlowServerHoldsNothingBack starts a stdio gateway with a server that
// is not ready until the test lets it be (a real stdio server behind a
// shell gate), a Python tool folder and two pipelines: one calling the
// local tool, one calling the slow server. A stdio client's first
// tools/list, answered after the start wait while the server is still
// starting, must list the local tool and the pipeline calling it; the
// pipeline calling the slow server waits for it. Once the server is ready,
// its tools and that pipeline come with one notifications/tools/list_changed,
// not one per catalog update.
func TestSlowServerHoldsNothingBack(t *testing.T) {
	needInterpreters(t, "python3")
	bin := goBuild(t, "./gateway/testdata/richserver", "richserver")
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	tools := filepath.Join(dir, "tools")
	writeFolder(t, tools, "shout", pyTool("shout", "Shout the text.", "'HI'"))
	pipes := filepath.Join(dir, "pipelines")
	if err := os.Mkdir(pipes, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(pipes, "local.yaml"), "name: uselocal\nsteps:\n  - {id: a, tool: tools__shout, with: {text: hi}}\n")
	writeFile(t, filepath.Join(pipes, "slow.yaml"), "name: useslow\nsteps:\n  - {id: a, tool: slow__whoami}\n")
	slow := jsonArgv([]string{"-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"`, gate, bin, "-tag", "slow"})
	p, gw := startStdio(t, `
servers:
  slow:
    command: sh
    args: `+slow+`
tools: {dirs: [`+strconv.Quote(tools)+`]}
pipelines: {dirs: [`+strconv.Quote(pipes)+`]}
limits: {start_wait: 1s}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := p.request(ctx, "initialize", `{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw-stdio","version":"0"}}`); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := p.notify("notifications/initialized", ""); err != nil {
		t.Fatal(err)
	}
	list := func() map[string]bool {
		t.Helper()
		res, err := p.request(ctx, "tools/list", `{}`)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var l struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(res, &l); err != nil {
			t.Fatalf("tools/list: %v: %s", err, res)
		}
		names := map[string]bool{}
		for _, tl := range l.Tools {
			names[tl.Name] = true
		}
		return names
	}
	first := list()
	if st := sourceState(gw, "slow"); st != "starting" {
		t.Fatalf("the slow server is %q before the test lets it start; want starting", st)
	}
	for _, want := range []string{"tools__shout", "pipelines__uselocal"} {
		if !first[want] {
			t.Errorf("the first tools/list, while the slow server starts, lacks %s: %v", want, first)
		}
	}
	for _, not := range []string{"slow__whoami", "pipelines__useslow"} {
		if first[not] {
			t.Errorf("the first tools/list has %s before the slow server is ready", not)
		}
	}

	before := len(p.stdout())
	writeFile(t, gate, "")
	waitFor(t, func() bool { n := list(); return n["slow__whoami"] && n["pipelines__useslow"] })
	// Whatever the server's start still sends has come once the gateway
	// says its start is over and a list after that is answered.
	waitFor(t, func() bool { return sourceState(gw, "slow") == "ready" && sourceState(gw, "pipelines") == "ready" })
	time.Sleep(500 * time.Millisecond) // a late list_changed would be counted
	list()
	changes := 0
	for _, line := range p.stdout()[before:] {
		if bytes.Contains(line, []byte(`"notifications/tools/list_changed"`)) {
			changes++
		}
	}
	if changes != 1 {
		t.Errorf("the slow server's start sent %d notifications/tools/list_changed; want 1 for its tools and the pipeline waiting for them", changes)
	}
}
