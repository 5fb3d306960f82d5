package skills

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// completion/complete on the skill:// template completes skill IDs, then
// the named skill's files, for the skills the request may see; anything
// else (a skill's prompt) completes to nothing rather than failing.
func TestCompleteSkillPaths(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"csv-insights/SKILL.md":            skillMD("csv-insights", "CSV."),
		"csv-insights/references/guide.md": "# Guide\n",
		"csv-insights/scripts/profile.py":  "print(1)\n",
		"csv-other/SKILL.md":               skillMD("csv-other", "Other."),
		"hidden/SKILL.md":                  skillMD("hidden", "Not for this profile."),
	})
	srv := NewServer(openLib(t, Options{Dirs: []string{dir}}))
	srv.Scope(func(_ context.Context, id string) bool { return id != "hidden" }, func(context.Context) string { return "p" })
	complete := func(ref, value string) (values []string, total int) {
		t.Helper()
		params, _ := json.Marshal(map[string]any{"ref": json.RawMessage(ref), "argument": map[string]string{"name": "path", "value": value}})
		raw, err := srv.Call(context.Background(), sdk.CallRequest{Method: "completion/complete", Params: params}, nil)
		if err != nil {
			t.Fatalf("complete %s %q: %v", ref, value, err)
		}
		var res struct {
			Completion struct {
				Values []string `json:"values"`
				Total  int      `json:"total"`
			} `json:"completion"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || res.Completion.Values == nil {
			t.Fatalf("complete %s %q: %s (%v); want a completion with values", ref, value, raw, err)
		}
		return res.Completion.Values, res.Completion.Total
	}
	tmpl := `{"type":"ref/resource","uri":"skill://{+path}"}`
	for _, c := range []struct {
		value string
		want  []string
	}{
		{"", []string{"csv-insights/", "csv-other/"}},
		{"csv-i", []string{"csv-insights/"}},
		{"csv-insights/", []string{"csv-insights/SKILL.md", "csv-insights/references/guide.md", "csv-insights/scripts/profile.py"}},
		{"csv-insights/ref", []string{"csv-insights/references/guide.md"}},
		{"hid", nil},
	} {
		got, total := complete(tmpl, c.value)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) || total != len(c.want) {
			t.Errorf("complete %q = %q (total %d), want %q", c.value, got, total, c.want)
		}
	}
	if got, _ := complete(`{"type":"ref/prompt","name":"csv-insights"}`, "x"); len(got) != 0 {
		t.Errorf("a prompt's argument completed to %q, want nothing", got)
	}
}
