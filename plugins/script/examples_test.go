package script

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk/sdktest"
	"github.com/skillgate/skillgate/plugins/toolspec"
)

// TestExamples runs every script tool of examples/tools through the executor.
func TestExamples(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(t), "examples", "tools")
	h := newHarness(t)
	cases := []struct {
		dir, bin string
		args     map[string]any
		want     string
	}{
		{"word_count", "python3", map[string]any{"text": "a b c\nd"}, `"words":4`},
		{"slugify", "node", map[string]any{"text": "Héllo, Wörld! 2026"}, `hello-world-2026`},
		{"text_stats", "bwrap", map[string]any{"text": "a b a c a b", "top": 2}, `3 a\n2 b`},
		{"counter", "python3", map[string]any{"name": "x", "by": 2}, `"value":2`},
		{"greet_ruby", "ruby", map[string]any{"name": "Ada", "language": "fr"}, `Bonjour, Ada!`},
		{"summarize_files", "node", map[string]any{"texts": []string{"a b", "c d e"}}, `"total":5`},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			requireCmd(t, c.bin)
			h.mustLoad(c.dir, filepath.Join(root, c.dir), toolspec.Limits{})
			rec := &sdktest.Recorder{CallToolFunc: func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
				var a any
				_ = json.Unmarshal(args, &a)
				r := h.call("word_count", name, a, nil)
				return json.RawMessage(r.raw), nil
			}}
			tool, _ := toolspec.Load(filepath.Join(root, c.dir))
			r := h.call(c.dir, tool.Name, c.args, rec)
			if r.IsError || !strings.Contains(r.raw, c.want) && !strings.Contains(r.text(), c.want) {
				t.Fatalf("result: %s\nwant %q in it", r.raw, c.want)
			}
		})
	}
}
