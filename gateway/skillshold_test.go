package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestBrokenSkillKeepsItsNameLive: two skills dirs define text-stats; the
// first one's is served. An edit that breaks it, picked up by the running
// gateway, leaves load_skill saying what is broken and where, not serving
// the second dir's text-stats in its place.
func TestBrokenSkillKeepsItsNameLive(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	good, bad := t.TempDir(), t.TempDir()
	writeFiles(t, good, map[string]string{"text-stats/SKILL.md": "---\nname: text-stats\ndescription: The good one.\n---\n# Good\n"})
	writeFiles(t, bad, map[string]string{"text-stats/SKILL.md": "---\nname: text-stats\ndescription: The other one.\n---\n# Other\n"})
	r := startGateway(t, "skills: {dirs: ["+good+", "+bad+"]}\n", nil)
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)
	load := func() string {
		return resultText(gc.call(t, ctx, "load_skill", map[string]any{"skill": "text-stats"}, nil))
	}
	if got := load(); !strings.Contains(got, "# Good") {
		t.Fatalf("load_skill: %q", got)
	}
	md := filepath.Join(good, "text-stats", "SKILL.md")
	if err := os.WriteFile(md, []byte("---\nname: text-stats\ndescription: [unclosed\n---\n# Good\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.gw.Skills().Kick()
	// Until the rescan, load_skill says the file changed under it.
	waitFor(t, func() bool {
		got := load()
		return strings.Contains(got, "not served") || strings.Contains(got, "# Other")
	})
	if got := load(); strings.Contains(got, "# Other") || !strings.Contains(got, "not served") || !strings.Contains(got, md) {
		t.Errorf("load_skill of the broken skill: %q, want its own error at %s", got, md)
	}
	if !strings.Contains(r.log.String(), "which comes first and is broken") {
		t.Errorf("the log does not say the other text-stats is held back:\n%s", r.log.String())
	}
}
