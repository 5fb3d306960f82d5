package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testenv"
)

// terminalControl matches what a terminal acts on instead of showing: C0
// controls but newline and tab (the tables' own), DEL, C1, and the
// bidirectional overrides and isolates.
var terminalControl = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

// TestTablesEscapeUpstreamText: what upstreams send (a tool's original
// name and description, a server's last error) reaches the terminal of
// tools list and servers as visible escapes, never as the control
// sequences that would clear the screen or reorder the text; --json keeps
// it as it came.
func TestTablesEscapeUpstreamText(t *testing.T) {
	modules := testenv.NPMDir(t)
	testenv.Require(t, "npm package @modelcontextprotocol/sdk", isDir(filepath.Join(modules, "@modelcontextprotocol", "sdk")),
		"run scripts/test-deps.sh")
	script, err := filepath.Abs(filepath.Join("testdata", "hostile_text.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "skillgate.yaml")
	writeFile(t, cfg, `servers:
  hostile:
    command: `+testenv.Node22(t)+`
    args: [`+script+`]
    env: {NODE_PATH: `+modules+`}
  broken:
    command: sh
    args: ["-c", "printf 'db gone\\033[2J\\033[1A\\342\\200\\256kcatta' >&2; exit 3"]
`)
	bin := buildSkillgate(t)
	for _, args := range [][]string{{"tools", "list"}, {"servers"}} {
		out, errOut, _ := runBin(t, bin, append(args, "-c", cfg)...)
		if m := terminalControl.FindString(out + errOut); m != "" {
			t.Errorf("%v prints the control character %q:\n%s%s", args, m, out, errOut)
		}
		for _, want := range map[string][]string{
			"tools":   {`evil\x1b[2J\x1b[31mPWNED\x1b[0m ok`, `Harmless\x1b]0;owned\x07 \u202etxt.exe \u009b31m`},
			"servers": {`db gone\x1b[2J\x1b[1A\u202ekcatta`},
		}[args[0]] {
			if !strings.Contains(out+errOut, want) {
				t.Errorf("%v does not show %s:\n%s%s", args, want, out, errOut)
			}
		}
	}
	out, errOut, code := runBin(t, bin, "tools", "list", "--json", "-c", cfg)
	if code != 0 {
		t.Fatalf("tools list --json: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, `"original": "evil\u001b[2J\u001b[31mPWNED\u001b[0m\rok"`) {
		t.Errorf("tools list --json does not keep the original name as sent:\n%s", out)
	}
}
