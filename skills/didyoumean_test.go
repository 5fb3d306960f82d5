package skills

import (
	"strings"
	"testing"
)

// TestUnknownSkillSuggests: an unknown skill's error names the skill a
// model or user probably meant: a typo, the wrong case, the folder of a
// skill served under its frontmatter name, a folder whose skill.md is
// in lower case (not read).
func TestUnknownSkillSuggests(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"text-stats/SKILL.md":   skillMD("text-stats", "Counts words."),
		"mismatch/SKILL.md":     skillMD("other-name", "Served under its name."),
		"lower/skill.md":        skillMD("lower", "Lower case file."),
		"acme/refunds/SKILL.md": skillMD("refunds", "Team skill."),
	})
	snap := openLib(t, Options{Dirs: []string{dir}}).Snapshot()
	for _, c := range []struct{ name, want string }{
		{"text-stat", `did you mean "text-stats"?`},
		{"Text-Stats", `did you mean "text-stats"?`},
		{"mismatch", `mismatch is the folder of skill other-name (its SKILL.md names it other-name); use other-name`},
		{"lower", `lower/skill.md is not read: a skill's file is SKILL.md, in upper case; rename it`},
		{"acme/refund", `did you mean "acme/refunds"?`},
		{"zzz-nothing", "find_skills lists the skills"},
	} {
		_, err := snap.Lookup(c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Lookup(%q) = %v, want %q in it", c.name, err, c.want)
		}
	}
}

// TestScriptWithArgsSuggests: a script path that carries its arguments
// ("scripts/wc.py 5") or its interpreter ("bash scripts/count.sh") is
// told to name the script alone and put the arguments in args.
func TestScriptWithArgsSuggests(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s/SKILL.md":         skillMD("s", "Scripts."),
		"s/scripts/wc.py":    "print(1)\n",
		"s/scripts/count.sh": "echo 1\n",
	})
	l := openLib(t, Options{Dirs: []string{dir}})
	sk, err := l.Lookup("s")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ script, want string }{
		{"scripts/wc.py 5", `script "scripts/wc.py" with args ["5"]`},
		{"wc.py --top 3", `script "wc.py" with args ["--top","3"]`},
		{"bash scripts/count.sh", `script "scripts/count.sh" with args []; the gateway picks the interpreter`},
		{"python3 scripts/wc.py a b", `script "scripts/wc.py" with args ["a","b"]`},
	} {
		_, _, err := resolveScript(sk, l.Snapshot().hooks, c.script)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("script %q: %v, want %q in it", c.script, err, c.want)
		}
	}
}
