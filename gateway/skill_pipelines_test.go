package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway"
)

// TestSkillPipelines: a skill's pipelines/ folder is served as pipelines
// of the skill: hidden in progressive mode until activate skill:X, named
// <skill>__<pipeline>, able to call the skill's own tool; a broken file is
// reported with file:line in Status without hiding the good pipeline; a
// file added while running is served after the poll.
func TestSkillPipelines(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"weekly/SKILL.md":              skillMD("weekly", "Write the weekly report."),
		"weekly/tools/greet/tool.yaml": "name: greet\ndescription: Greet someone.\nruntime: bash\nentry: greet.sh\nargs: [\"{who}\"]\ninput_schema: {type: object, properties: {who: {type: string}}, required: [who]}\n",
		"weekly/tools/greet/greet.sh":  "echo \"hello $1\"\n",
		"weekly/pipelines/report.yaml": "name: report\ndescription: Greet, then report.\ninputs: {type: object, properties: {who: {type: string}}, required: [who]}\nsteps:\n  - id: hi\n    tool: weekly__greet\n    with: {who: \"${{ inputs.who }}\"}\noutputs:\n  said: ${{ trim(steps.hi.outputs) }}\n",
		"weekly/pipelines/broken.yaml": "name: broken\nsteps:\n  - id: x\n    tool: no_such__tool\n",
		"weekly/pipelines/also.yaml":   "name: also\nsteps:\n  - id: y\n    tool: nor_this__tool\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := startGateway(t, "disclosure: progressive\nskills: {dirs: ["+dir+"]}\n", nil)
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)

	var st gateway.SourceStatus
	waitFor(t, func() bool {
		st = r.status(t)["skill-pipelines:weekly"]
		return st.Tools == 1
	})
	if st.State != "invalid" || len(st.Problems) != 2 || !strings.Contains(strings.Join(st.Problems, "\n"), "broken.yaml:4") || !strings.Contains(strings.Join(st.Problems, "\n"), "no_such__tool") {
		t.Errorf("status: %+v", st)
	}
	// Calling a held-back pipeline quotes its own problem, not the first
	// of the folder's (also.yaml's).
	if _, err := r.gw.CallTool(ctx, "weekly__broken", nil, nil); err == nil ||
		!strings.Contains(err.Error(), `pipeline "broken" of skill weekly has problems and is not served: `+filepath.Join(dir, "weekly", "pipelines", "broken.yaml")+":4:") ||
		strings.Contains(err.Error(), "also.yaml") || !strings.Contains(err.Error(), "skillgate skills validate") {
		t.Errorf("calling held-back weekly__broken: %v", err)
	}
	if slices.Contains(gc.names(t, ctx), "weekly__report") {
		t.Error("a skill's pipeline is listed before activation")
	}
	if got := resultText(gc.call(t, ctx, "activate", map[string]any{"targets": []string{"skill:weekly"}}, nil)); !strings.Contains(got, "weekly__report") {
		t.Errorf("activate: %s", got)
	}
	res := gc.call(t, ctx, "weekly__report", map[string]any{"who": "Ada"}, nil)
	if res.IsError || !strings.Contains(resultText(res), "hello Ada") {
		t.Errorf("weekly__report: %s", resultText(res))
	}

	os.WriteFile(filepath.Join(dir, "weekly/pipelines/again.yaml"), []byte("name: again\nsteps:\n  - {id: a, tool: weekly__report, with: {who: Bo}}\n"), 0o644)
	waitFor(t, func() bool { return slices.Contains(gc.names(t, ctx), "weekly__again") })
	if res := gc.call(t, ctx, "weekly__again", nil, nil); res.IsError || !strings.Contains(resultText(res), "hello Bo") {
		t.Errorf("weekly__again: %s", resultText(res))
	}
}
