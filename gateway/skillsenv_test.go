package gateway_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/gateway/config"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/skills"
)

// TestSkillEnvRuleThroughGateway: a skill cannot have the gateway's own
// auth token (auth.tokens: ["${SKILLGATE_TOKEN}"]) handed to its script by
// asking for it in SKILL.md, nor to its tool folder by its tool.yaml,
// until the operator names the variable in skills.env_allow; a reload
// applies the setting.
func TestSkillEnvRuleThroughGateway(t *testing.T) {
	_, err := exec.LookPath("bash")
	testenv.Require(t, "bash", err == nil, "install bash")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	const secret = "gw-auth-secret-0123456789"
	t.Setenv("SKILLGATE_TOKEN", secret)
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"greedy/SKILL.md":             "---\nname: greedy\ndescription: Wants the token.\nscripts:\n  t.sh: {env: [SKILLGATE_TOKEN]}\n---\n# Greedy\n",
		"greedy/scripts/t.sh":         "echo \"token=$SKILLGATE_TOKEN\"\n",
		"greedy/tools/leak/tool.yaml": "name: leak\ndescription: Leaks.\nruntime: bash\nentry: l.sh\nenv: [SKILLGATE_TOKEN]\n",
		"greedy/tools/leak/l.sh":      "echo \"token=$SKILLGATE_TOKEN\"\n",
		"greedy/pipelines/use.yaml":   "name: use\ndescription: Uses leak.\nsteps:\n  - {id: a, tool: greedy__leak}\n",
	})
	vars := map[string]string{"SKILLGATE_TOKEN": secret}
	const base = "auth: {tokens: [\"${SKILLGATE_TOKEN}\"]}\nskills: {dirs: [skills]}\n"
	name := filepath.Join(dir, "skillgate.yaml")
	r := startGatewayNamed(t, name, base, vars)
	r.token = secret
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + secret}))
	run := func() string {
		return resultText(gc.call(t, ctx, "run_skill_script", map[string]any{"skill": "greedy", "script": "t.sh"}, nil))
	}
	if got := run(); strings.Contains(got, secret) || !strings.Contains(got, "SKILLGATE_TOKEN") || !strings.Contains(got, "skills.env_allow") || !strings.Contains(got, "SKILL.md:5") {
		t.Errorf("run_skill_script asking for the auth token's variable: %q, want it refused at SKILL.md:5, naming skills.env_allow", got)
	}
	if _, ok := r.gw.Snapshot().Tool("greedy__leak"); ok {
		t.Error("the skill's tool asking for the auth token's variable is served")
	}
	if !strings.Contains(r.log.String(), "skill tool not served") || !strings.Contains(r.log.String(), "skills.env_allow") {
		t.Errorf("the refused tool is not logged:\n%s", r.log.String())
	}
	// The skill's pipeline calling the refused tool is held back, not
	// served as if the tool were about to load.
	if _, ok := r.gw.Snapshot().Tool("greedy__use"); ok {
		t.Errorf("the skill's pipeline calling its refused tool is served: %+v", r.status(t)["skill-pipelines:greedy"])
	}

	cfg, err := config.Parse(strings.NewReader(strings.Replace(base, "[skills]", "[skills], env_allow: [SKILLGATE_TOKEN]", 1)), name,
		func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gw.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("greedy__leak"); return ok })
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("greedy__use"); return ok })
	if got := run(); strings.TrimSpace(got) != "token="+secret {
		t.Errorf("run_skill_script with the variable in skills.env_allow: %q", got)
	}
}

// TestSkillsSandboxRequiredThroughGateway: with skills.sandbox: required,
// a skill's script and its tool folder's tool run under the sandbox
// (their folders read-only there) though neither SKILL.md nor tool.yaml
// asks for it.
func TestSkillsSandboxRequiredThroughGateway(t *testing.T) {
	for _, bin := range []string{"bash", "bwrap"} {
		_, err := exec.LookPath(bin)
		testenv.Require(t, bin, err == nil, "install "+bin+" (scripts/test-deps.sh does)")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	const probe = "if (echo x > written) 2>/dev/null; then echo writable; else echo read-only; fi\n"
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"boxed/SKILL.md":          "---\nname: boxed\ndescription: Writes where it lives.\n---\n# Boxed\n",
		"boxed/scripts/x.sh":      probe,
		"boxed/tools/w/tool.yaml": "name: w\ndescription: Writes where it lives.\nruntime: bash\nentry: w.sh\n",
		"boxed/tools/w/w.sh":      probe,
	})
	r := startGatewayNamed(t, filepath.Join(dir, "skillgate.yaml"), "skills: {dirs: [skills], sandbox: required}\n", nil)
	r.waitReady(t)
	ctx := context.Background()
	gc := newGoClient(t, ctx, r.url+"/mcp", mcp.ProtocolVersion20251125)
	if got := resultText(gc.call(t, ctx, "run_skill_script", map[string]any{"skill": "boxed", "script": "x.sh"}, nil)); strings.TrimSpace(got) != "read-only" {
		t.Errorf("the skill's script: %q, want it sandboxed (read-only)", got)
	}
	waitFor(t, func() bool { _, ok := r.gw.Snapshot().Tool("boxed__w"); return ok })
	if got := resultText(gc.call(t, ctx, "call_tool", map[string]any{"name": "boxed__w", "arguments": map[string]any{}}, nil)); strings.TrimSpace(got) != "read-only" {
		t.Errorf("the skill's tool: %q, want it sandboxed (read-only)", got)
	}
}

// TestSkillsRulesOfConfig: the variables an auth token comes from (its
// whole value, or a part of 8 characters or more) are denied; a
// repository's sandbox: required names it by the URL it is checked out
// from (a relative path made absolute).
func TestSkillsRulesOfConfig(t *testing.T) {
	t.Setenv("SG_TEST_WHOLE", "whole-token-value")
	t.Setenv("SG_TEST_PART", "part-0123456789")
	t.Setenv("SG_TEST_SHORT", "abc")
	cfg, err := config.Parse(strings.NewReader("auth: {tokens: [whole-token-value, \"Bearer-part-0123456789-abc\"]}\n"+
		"skills:\n  repos:\n    - {url: ./team-skills, sandbox: required}\n    - {url: https://example.com/other.git}\n"), "skillgate.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	deny := gateway.SkillsEnvRule(cfg).Deny
	if !slices.Contains(deny, "SG_TEST_WHOLE") || !slices.Contains(deny, "SG_TEST_PART") || slices.Contains(deny, "SG_TEST_SHORT") {
		t.Errorf("denied = %v, want SG_TEST_WHOLE and SG_TEST_PART, not SG_TEST_SHORT", deny)
	}
	abs, _ := filepath.Abs("team-skills")
	rule := gateway.SkillsSandboxRule(cfg)
	if !rule.Requires(&skills.Skill{Source: "git " + abs + "@0123"}) || rule.Requires(&skills.Skill{Source: "git https://example.com/other.git@0123"}) {
		t.Errorf("sandbox rule %+v: want the first repository's skills only", rule)
	}
}
