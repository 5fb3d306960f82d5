package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/internal/testenv"
)

// TestPendingToolEverywhere: a step calling a tool of a configured server
// that failed is told as "server X is failed: <its last error>", not as an
// unknown tool, by the @pipeline tools (pipeline__create, from mcp-go's
// client) and by a skill's pipelines (their status); once the server is
// ready the skill's pipeline is served.
func TestPendingToolEverywhere(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	everything := testenv.NodeServer(t, "server-everything")
	dir := t.TempDir()
	gate := filepath.Join(dir, "go") // late starts once this file exists
	if err := os.Mkdir(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"weekly/SKILL.md":              skillMD("weekly", "Write the weekly report."),
		"weekly/pipelines/report.yaml": "name: report\nsteps:\n  - {id: a, tool: late__echo, with: {message: hi}}\n",
	})
	late := jsonArgv(append([]string{"-c", `test -e "$0" || { echo "not yet" >&2; exit 3; }; exec "$@"`, gate}, everything...))
	r := startGatewayNamed(t, filepath.Join(dir, "skillgate.yaml"), `
servers:
  broken:
    command: sh
    args: ["-c", "echo boom >&2; exit 3"]
  late:
    command: sh
    args: `+late+`
pipelines: {dirs: [pipelines]}
skills: {dirs: [skills]}
admin: {writes: all}
`, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)
	if res := gc.call(t, ctx, "activate", map[string]any{"targets": []string{"@pipeline"}}, nil); res.IsError {
		t.Fatal(resultText(res))
	}
	// The gateway retries a failed server with backoff; while a retry runs
	// the server is "starting" (with its last error), and an answer given
	// then says so. Ask again until that retry has failed too.
	var res *mcp.CallToolResult
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res = gc.call(t, ctx, "pipeline__create", map[string]any{"name": "usebroken", "yaml": "steps:\n  - {id: a, tool: broken__x}\n"}, nil)
		if !res.IsError || !strings.Contains(resultText(res), "server broken is starting: ") || time.Now().After(deadline) {
			break
		}
	}
	if got := resultText(res); !res.IsError || !strings.Contains(got, "steps[0].tool: broken__x: server broken is failed: ") ||
		!strings.Contains(got, "boom") || strings.Contains(got, "unknown tool") {
		t.Errorf("pipeline__create over a failed server's tool: %s", got)
	}

	const skillPipes = "skill-pipelines:weekly"
	var st map[string]string
	waitFor(t, func() bool {
		s := r.status(t)[skillPipes]
		st = map[string]string{"state": s.State, "problems": strings.Join(s.Problems, "\n")}
		return s.State == "invalid"
	})
	if p := st["problems"]; !strings.Contains(p, "steps[0].tool: late__echo: server late is failed: ") || !strings.Contains(p, "not yet") || strings.Contains(p, "unknown tool") {
		t.Errorf("skill pipeline over a failed server's tool: %v", st)
	}

	writeFile(t, gate, "")
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("weekly__report"); return ok })
	if res, err := r.gw.CallTool(ctx, "weekly__report", nil, nil); err != nil || !strings.Contains(string(res), "Echo: hi") {
		t.Fatalf("weekly__report once late is ready: %s %v", res, err)
	}
}
