package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSkillFileURIEscaped: a skill file whose name needs escaping in a
// URI ("my file.md") is listed by skills/list and completion/complete
// with its path escaped, and mcp-go's client reads it by the URI it was
// given. (The unescaped form is read by the skills server too, see
// skills.TestFileURIEscaped; mcp-go's template match in the front end
// refuses a URI with a space before it gets there.)
func TestSkillFileURIEscaped(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"scripty/SKILL.md":              skillMD("scripty", "Has a file with a space."),
		"scripty/references/my file.md": "Spaced out.\n",
		"scripty/references/100%.md":    "Percent.\n",
	})
	r := startGateway(t, "skills: {dirs: ["+dir+"]}\n", nil)
	r.waitReady(t)
	url := r.url + "/mcp"

	var list struct {
		Result struct {
			Skills []struct {
				Resources []struct {
					URI string `json:"uri"`
				} `json:"resources"`
			} `json:"skills"`
		} `json:"result"`
	}
	out := eraCallers(t, url)["legacy"]("skills/list", "", `{}`)
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Result.Skills) != 1 {
		t.Fatalf("skills/list: %v %s", err, out)
	}
	listed := map[string]bool{}
	for _, res := range list.Result.Skills[0].Resources {
		listed[res.URI] = true
	}
	for _, want := range []string{"skill://scripty/references/my%20file.md", "skill://scripty/references/100%25.md"} {
		if !listed[want] {
			t.Errorf("skills/list lacks %s: %s", want, out)
		}
	}

	ctx := context.Background()
	gc := newGoClient(t, ctx, url, mcp.ProtocolVersion20251125)
	creq := mcp.CompleteRequest{}
	creq.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "skill://{+path}"}
	creq.Params.Argument.Name = "path"
	creq.Params.Argument.Value = "scripty/references/my"
	cres, err := gc.Complete(ctx, creq)
	if err != nil {
		t.Fatalf("completion/complete: %v", err)
	}
	if v := cres.Completion.Values; len(v) != 1 || v[0] != "scripty/references/my%20file.md" {
		t.Errorf("completion/complete of %q = %q, want the escaped path", creq.Params.Argument.Value, v)
	}

	for uri, want := range map[string]string{
		"skill://scripty/references/my%20file.md": "Spaced out.",
		"skill://scripty/references/100%25.md":    "Percent.",
	} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := gc.ReadResource(ctx, req)
		if err != nil || len(res.Contents) != 1 {
			t.Errorf("resources/read %s: %+v %v", uri, res, err)
			continue
		}
		if tc, ok := res.Contents[0].(mcp.TextResourceContents); !ok || !strings.Contains(tc.Text, want) || tc.URI != uri {
			t.Errorf("resources/read %s: %+v", uri, res.Contents[0])
		}
	}
}
