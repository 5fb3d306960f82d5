package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSkillFileURIRaw: mcp-go's client reads a skill file whose name has
// a space by the raw URI too ("skill://scripty/references/my file.md"),
// in both protocol eras: the front end's catch-all takes a URI that no
// URI template matches, and the read reaches the skills server.
func TestSkillFileURIRaw(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"scripty/SKILL.md":              skillMD("scripty", "Has a file with a space."),
		"scripty/references/my file.md": "Spaced out.\n",
	})
	r := startGateway(t, "skills: {dirs: ["+dir+"]}\n", nil)
	r.waitReady(t)
	ctx := context.Background()
	for _, era := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		gc := newGoClient(t, ctx, r.url+"/mcp", era)
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "skill://scripty/references/my file.md"
		res, err := gc.ReadResource(ctx, req)
		if err != nil || len(res.Contents) != 1 {
			t.Errorf("%s: resources/read %q: %+v %v", era, req.Params.URI, res, err)
			continue
		}
		if tc, ok := res.Contents[0].(mcp.TextResourceContents); !ok || !strings.Contains(tc.Text, "Spaced out.") {
			t.Errorf("%s: resources/read %q: %+v", era, req.Params.URI, res.Contents[0])
		}
	}
}
