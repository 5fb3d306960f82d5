package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSkillsProfileReadsSkillFiles: a profile that exposes a skill (and
// not everything) lists the skill:// file template and reads the other
// files of its skill through it (references/*.md next to SKILL.md), in
// both eras and from mcp-go's client; a file of a skill the profile does
// not expose is refused as before.
func TestSkillsProfileReadsSkillFiles(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"weekly/SKILL.md":            skillMD("weekly", "Write the weekly report."),
		"weekly/references/style.md": "Use short sentences in the weekly report.\n",
		"daily/SKILL.md":             skillMD("daily", "Write the daily report."),
		"daily/references/notes.md":  "Daily secrets.\n",
	})
	r := startGateway(t, "skills: {dirs: ["+dir+"]}\nprofiles:\n  onlyweekly: {skills: [weekly]}\n", nil)
	r.waitReady(t)
	url := r.url + "/mcp/p/onlyweekly"
	for era, with := range eraCallers(t, url) {
		if got := with("resources/templates/list", "", `{}`); !strings.Contains(got, `skill://{+path}`) {
			t.Errorf("%s resources/templates/list on the profile: %s", era, got)
		}
		own := `{"uri":"skill://weekly/references/style.md"}`
		if got := with("resources/read", "skill://weekly/references/style.md", own); !strings.Contains(got, "Use short sentences") {
			t.Errorf("%s resources/read of the profile's skill's file: %s", era, got)
		}
		other := `{"uri":"skill://daily/references/notes.md"}`
		if got := with("resources/read", "skill://daily/references/notes.md", other); !strings.Contains(got, `"error"`) || strings.Contains(got, "Daily secrets") {
			t.Errorf("%s resources/read of another skill's file: %s", era, got)
		}
	}

	ctx := context.Background()
	gc := newGoClient(t, ctx, url, mcp.ProtocolVersion20251125)
	tl, err := gc.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate.Raw() != "skill://{+path}" {
		t.Fatalf("mcp-go resources/templates/list: %+v %v", tl, err)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "skill://weekly/references/style.md"
	res, err := gc.ReadResource(ctx, req)
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("mcp-go resources/read: %+v %v", res, err)
	}
	if tc, ok := res.Contents[0].(mcp.TextResourceContents); !ok || !strings.Contains(tc.Text, "Use short sentences") {
		t.Errorf("mcp-go resources/read: %+v", res.Contents[0])
	}
	req.Params.URI = "skill://daily/references/notes.md"
	if res, err := gc.ReadResource(ctx, req); err == nil {
		t.Errorf("mcp-go read another skill's file: %+v", res)
	}

	// The default endpoint reads every skill's files, as before.
	for era, with := range eraCallers(t, r.url+"/mcp") {
		if got := with("resources/read", "skill://daily/references/notes.md", `{"uri":"skill://daily/references/notes.md"}`); !strings.Contains(got, "Daily secrets") {
			t.Errorf("%s default endpoint resources/read: %s", era, got)
		}
	}
}
