package skills

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestHookFailureDenied: a hook that fails (exits 3, prints something
// that is not JSON, runs past its time) denies the run: run_skill_script
// reports _meta skillgate/status "denied", as docs/SKILLS.md says, and
// the message names the hook file — a timeout in a hook's terms, not a
// tool's ("raise timeout in tool.yaml").
func TestHookFailureDenied(t *testing.T) {
	need(t, "bash", "python3")
	old := hookTimeout
	hookTimeout = time.Second
	t.Cleanup(func() { hookTimeout = old })
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"guarded/SKILL.md":        skillMD("guarded", "A skill with a fussy hook."),
		"guarded/scripts/echo.py": echoPy,
		"guarded/hooks/pre.sh": `ev=$(cat)
case "$ev" in
  *'"exit3"'*) echo oops >&2; exit 3 ;;
  *'"garbage"'*) echo 'not json' ;;
  *'"slow"'*) sleep 30 ;;
  *) echo '{}' ;;
esac
`,
	})
	srv := NewServer(scriptLib(t, dir, Options{}))
	for _, c := range []struct{ arg, want string }{
		{"exit3", "failed"},
		{"garbage", "not a decision object"},
		{"slow", "the time a hook gets"},
	} {
		args, _ := json.Marshal(map[string]any{"skill": "guarded", "script": "echo.py", "args": []string{c.arg}})
		raw, err := srv.CallTool(context.Background(), ToolRun, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, raw)
		text := r.text()
		if !r.IsError || r.Meta["skillgate/status"] != StatusDenied || !strings.Contains(text, "guarded/hooks/pre.sh") || !strings.Contains(text, c.want) || strings.Contains(text, "tool.yaml") {
			t.Errorf("%s: status %v: %s", c.arg, r.Meta["skillgate/status"], text)
		}
	}
}
