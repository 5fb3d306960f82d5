package skills

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestSkillEnvRule: a skill's SKILL.md may ask (env:) for variables of
// the gateway's environment whose names do not look like credentials;
// credential-like ones need the operator's skills.env_allow, and the
// variables the gateway's auth tokens come from (EnvRule.Deny) need it
// to name them exactly. A refused variable is a warning at load and an
// error at run naming SKILL.md:line, the variable and the setting.
func TestSkillEnvRule(t *testing.T) {
	need(t, "bash")
	t.Setenv("SKILLGATE_TOKEN", "gateway-auth-secret")
	t.Setenv("SECRET_TOKEN", "other-secret")
	t.Setenv("PLAIN_SETTING", "plain-value")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"greedy/SKILL.md": skillMD("greedy", "Wants secrets.",
			"scripts:\n  t.sh:\n    env: [SKILLGATE_TOKEN, SECRET_TOKEN]\n"),
		"greedy/scripts/t.sh": "echo \"gw=$SKILLGATE_TOKEN other=$SECRET_TOKEN\"\n",
		"plain/SKILL.md":      skillMD("plain", "Wants a setting.", "execution:\n  env: [PLAIN_SETTING]\n"),
		"plain/scripts/p.sh":  "echo \"plain=$PLAIN_SETTING\"\n",
	})
	run := func(lib *Library, skill, script string) (string, error) {
		t.Helper()
		raw, err := lib.RunScript(context.Background(), RunRequest{Skill: skill, Script: script}, nil)
		if err != nil {
			return "", err
		}
		return decode(t, raw).text(), nil
	}
	deny := EnvRule{Deny: []string{"SKILLGATE_TOKEN"}}

	lib := scriptLib(t, dir, Options{Env: deny})
	if out, err := run(lib, "plain", "p.sh"); err != nil || !strings.Contains(out, "plain=plain-value") {
		t.Errorf("a variable not like a credential: %q %v, want it passed", out, err)
	}
	_, err := run(lib, "greedy", "t.sh")
	if err == nil || !regexp.MustCompile(`greedy/SKILL.md:\d+: `).MatchString(err.Error()) ||
		!strings.Contains(err.Error(), "SKILLGATE_TOKEN") || !strings.Contains(err.Error(), "skills.env_allow") {
		t.Errorf("run asking for the auth token's variable: %v, want an error naming SKILL.md:line, the variable and skills.env_allow", err)
	}
	var warned []string
	for _, p := range lib.Snapshot().Problems() {
		if p.Warning && strings.Contains(p.Msg, "skills.env_allow") {
			warned = append(warned, p.String())
		}
	}
	if len(warned) != 2 || !strings.Contains(strings.Join(warned, "\n"), "SECRET_TOKEN") || !strings.Contains(warned[0], "SKILL.md:") {
		t.Errorf("load warnings = %q, want one per refused variable, at SKILL.md:line", warned)
	}

	// A prefix lets credential-like names through, but not the auth
	// token's variable, which must be named exactly.
	lib = scriptLib(t, dir, Options{Env: EnvRule{Allow: []string{"SECRET_*", "SKILLGATE_*"}, Deny: deny.Deny}})
	if _, err := run(lib, "greedy", "t.sh"); err == nil || !strings.Contains(err.Error(), "SKILLGATE_TOKEN") || strings.Contains(err.Error(), "SECRET_TOKEN,") {
		t.Errorf("with a prefix allowed: %v, want SKILLGATE_TOKEN refused still", err)
	}
	lib = scriptLib(t, dir, Options{Env: EnvRule{Allow: []string{"SECRET_TOKEN", "SKILLGATE_TOKEN"}, Deny: deny.Deny}})
	if out, err := run(lib, "greedy", "t.sh"); err != nil || !strings.Contains(out, "gw=gateway-auth-secret other=other-secret") {
		t.Errorf("with both named: %q %v, want both passed", out, err)
	}
	for _, p := range lib.Snapshot().Problems() {
		if strings.Contains(p.Msg, "env_allow") {
			t.Errorf("problem with both allowed: %s", p)
		}
	}
}

// TestSkillSandboxRequired: with the sandbox required (skills.sandbox:
// required), a script whose SKILL.md does not ask for the sandbox runs in
// it all the same, and so does the skill's own hook: their folders are
// read-only there.
func TestSkillSandboxRequired(t *testing.T) {
	need(t, "bash", "bwrap")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s/SKILL.md":     skillMD("s", "Plain."),
		"s/scripts/x.sh": "if (echo x > scripts/written) 2>/dev/null; then echo writable; else echo read-only; fi\n",
		"h/SKILL.md":     skillMD("h", "Hooked."),
		"h/scripts/y.sh": "echo ran\n",
		"h/hooks/pre.sh": "if (echo x > written) 2>/dev/null; then echo '{\"decision\": \"deny\", \"reason\": \"hook writable\"}'; fi\n",
	})
	for _, required := range []bool{false, true} {
		lib := scriptLib(t, dir, Options{Sandbox: SandboxRule{All: required}})
		raw, err := lib.RunScript(context.Background(), RunRequest{Skill: "s", Script: "x.sh"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "writable", true: "read-only"}[required]
		if out := decode(t, raw).text(); !strings.Contains(out, want) {
			t.Errorf("sandbox required %v: %q, want %s", required, out, want)
		}
		_, err = lib.RunScript(context.Background(), RunRequest{Skill: "h", Script: "y.sh"}, nil)
		if hookWrote := err != nil && strings.Contains(err.Error(), "hook writable"); hookWrote == required {
			t.Errorf("sandbox required %v: the skill's hook gave %v", required, err)
		}
	}
}

// TestSandboxRuleRequires: which skills a SandboxRule runs under the
// sandbox, by where they come from.
func TestSandboxRuleRequires(t *testing.T) {
	local := &Skill{Source: "dir"}
	team := &Skill{Source: "git git@example.com:team/skills.git@0123abc"}
	other := &Skill{Source: "git https://example.com/other.git@4567def"}
	for _, c := range []struct {
		rule               SandboxRule
		local, team, other bool
	}{
		{SandboxRule{}, false, false, false},
		{SandboxRule{All: true}, true, true, true},
		{SandboxRule{Repos: true}, false, true, true},
		{SandboxRule{URLs: []string{"git@example.com:team/skills.git"}}, false, true, false},
	} {
		if got := [3]bool{c.rule.Requires(local), c.rule.Requires(team), c.rule.Requires(other)}; got != [3]bool{c.local, c.team, c.other} {
			t.Errorf("%+v: local, team, other = %v", c.rule, got)
		}
	}
}
