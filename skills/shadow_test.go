package skills

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestTeamSkillShadowsFiles: a skill newteam with a folder tskill/ and a
// team skill newteam/tskill from another skills folder would share the
// URIs skill://newteam/tskill/...; resources/read serves the team
// skill's, so skills/list and completion leave newteam's files under
// tskill/ out, and a warning on newteam's SKILL.md says why and what to
// rename.
func TestTeamSkillShadowsFiles(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	writeTree(t, one, map[string]string{
		"newteam/SKILL.md":         skillMD("newteam", "A plain skill."),
		"newteam/tskill/SKILL.md":  "a plain file\n",
		"newteam/tskill/notes.md":  "plain notes\n",
		"newteam/references/ok.md": "ok\n",
	})
	writeTree(t, two, map[string]string{
		"newteam/tskill/SKILL.md": skillMD("tskill", "The team skill."),
	})
	lib := openLib(t, Options{Dirs: []string{one, two}})
	srv := NewServer(lib)
	snap := lib.Snapshot()
	if got := ids(snap); !slices.Equal(got, []string{"newteam", "newteam/tskill"}) {
		t.Fatalf("skills = %q", got)
	}
	var warned []string
	for _, p := range snap.Problems() {
		if p.Warning && strings.Contains(p.Msg, "newteam/tskill") {
			warned = append(warned, p.String())
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "newteam/SKILL.md") || !strings.Contains(warned[0], "tskill/") || !strings.Contains(warned[0], "rename") {
		t.Errorf("problems about the shared URIs = %q, want one warning on newteam's SKILL.md saying what to rename", warned)
	}
	host, _ := snap.Lookup("newteam")
	e, err := srv.Entry(host)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range e.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, []string{"skill://newteam/SKILL.md", "skill://newteam/references/ok.md"}) {
		t.Errorf("newteam's resources = %q, want its files outside tskill/", uris)
	}
	params, _ := json.Marshal(map[string]any{"ref": map[string]string{"type": "ref/resource", "uri": "skill://{+path}"}, "argument": map[string]string{"name": "path", "value": "newteam/tskill/"}})
	raw, err := srv.Call(context.Background(), sdk.CallRequest{Method: "completion/complete", Params: params}, nil)
	if err != nil || !strings.Contains(string(raw), `"values":["newteam/tskill/SKILL.md"]`) {
		t.Errorf("completion of newteam/tskill/ = %s %v, want the team skill's SKILL.md once", raw, err)
	}
	got, err := srv.Call(context.Background(), sdk.CallRequest{Method: "resources/read", Params: json.RawMessage(`{"uri":"skill://newteam/tskill/SKILL.md"}`)}, nil)
	if err != nil || !strings.Contains(string(got), "The team skill.") {
		t.Errorf("resources/read skill://newteam/tskill/SKILL.md = %s %v, want the team skill", got, err)
	}
}
