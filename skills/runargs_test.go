package skills

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunScriptArgTypes: numbers and booleans in run_skill_script's args
// reach the script as the command line writes them; an argument that
// cannot be one (an object) is an error that says which, with the
// skillgate/status every run_skill_script result carries.
func TestRunScriptArgTypes(t *testing.T) {
	need(t, "python3")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"echo/SKILL.md":        skillMD("echo", "Echoes its arguments."),
		"echo/scripts/echo.py": echoPy,
	})
	srv := NewServer(scriptLib(t, dir, Options{}))
	run := func(args string) result {
		raw, err := srv.CallTool(context.Background(), ToolRun, json.RawMessage(`{"skill":"echo","script":"echo.py","args":`+args+`}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, raw)
	}
	r := run(`[1, true, "x", 2.5, false]`)
	argv, _ := json.Marshal(r.StructuredContent["argv"])
	if r.IsError || string(argv) != `["1","true","x","2.5","false"]` {
		t.Errorf("args [1, true, ...]: argv %s: %s", argv, r.text())
	}
	for _, bad := range []string{`[{"a":1}]`, `"x"`, `[null]`} {
		r := run(bad)
		if !r.IsError || r.Meta["skillgate/status"] != "error" || !strings.Contains(r.text(), "args") {
			t.Errorf("args %s: %v %s", bad, r.Meta, r.text())
		}
	}
}
