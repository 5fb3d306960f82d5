package skills

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestFileURIEscaped: skills/list names a file whose name needs escaping
// by its escaped URI, and resources/read takes that URI and the
// unescaped form a hand-written URI may have; a file whose name is itself
// an escape ("a%20b.md") is still read by its own name.
func TestFileURIEscaped(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"scripty/SKILL.md":              skillMD("scripty", "Spaces."),
		"scripty/references/my file.md": "spaced\n",
		"scripty/references/100%.md":    "percent\n",
		"scripty/references/a%20b.md":   "literal\n",
		"team/sub/SKILL.md":             skillMD("sub", "Team skill."),
		"team/sub/ü ber.md":             "umlaut\n",
	})
	srv := NewServer(openLib(t, Options{Dirs: []string{dir}}))
	ctx := context.Background()
	raw, err := srv.Call(ctx, sdk.CallRequest{Method: "skills/list", Params: json.RawMessage(`{}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"skill://scripty/references/my%20file.md"`, `"skill://scripty/references/100%25.md"`,
		`"skill://scripty/references/a%2520b.md"`, `"skill://team/sub/%C3%BC%20ber.md"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("skills/list lacks %s: %s", want, raw)
		}
	}
	for uri, want := range map[string]string{
		"skill://scripty/references/my%20file.md": "spaced",
		"skill://scripty/references/my file.md":   "spaced",
		"skill://scripty/references/100%25.md":    "percent",
		"skill://scripty/references/100%.md":      "percent",
		"skill://scripty/references/a%2520b.md":   "literal",
		"skill://scripty/references/a%20b.md":     "literal",
		"skill://team/sub/%C3%BC%20ber.md":        "umlaut",
		"skill://team/sub/ü ber.md":               "umlaut",
	} {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		got, err := srv.Call(ctx, sdk.CallRequest{Method: "resources/read", Params: params}, nil)
		if err != nil || !strings.Contains(string(got), want) {
			t.Errorf("resources/read %s = %s, %v; want %q", uri, got, err, want)
		}
	}
	got := srv.readFile(ctx, "scripty", "references/my file.md", 0)
	if strings.Contains(string(got), "isError") {
		t.Fatalf("read_skill_file: %s", got)
	}
}
