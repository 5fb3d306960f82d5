package config

import (
	"errors"
	"strings"
	"testing"
)

// TestParseForSkills: for the skills commands a ${VAR} not set outside
// what they read (a pipelines dir, a server's env, an auth token) is a
// Note, and the auth token's leaves auth: at its default; one in a skills
// setting, or in a limit skills use, is an error at file:line.
func TestParseForSkills(t *testing.T) {
	const file = `servers:
  notes: {command: node, env: {TOKEN: "${SG_T_SRV_SECRET}"}}
pipelines: {dirs: ["${SG_T_PIPES}"]}
auth: {tokens: ["${SG_T_TOKEN}"]}
skills: {dirs: [skills]}
`
	cfg, err := ParseForSkills(strings.NewReader(file), "f.yaml", nil)
	if err != nil {
		t.Fatalf("ParseForSkills: %v", err)
	}
	if len(cfg.Notes) != 3 || len(cfg.Auth.Tokens) != 0 || len(cfg.Skills.Dirs) != 1 || cfg.Servers["notes"] == nil || cfg.Servers["notes"].Problem != nil {
		t.Errorf("notes %v, tokens %q, skills dirs %q, server %+v; want three notes, no token, the skills dir, the server without a problem",
			cfg.Notes, cfg.Auth.Tokens, cfg.Skills.Dirs, cfg.Servers["notes"])
	}
	if _, err := ParseForStdio(strings.NewReader(file), "f.yaml", nil); !errors.Is(err, ErrUndefinedVariable) {
		t.Errorf("ParseForStdio = %v, want the unset pipelines dir as an error", err)
	}
	for _, tt := range []struct{ name, yaml, want string }{
		{"in skills.repos", strings.Replace(file, "skills: {dirs: [skills]}", "skills: {repos: [{name: r, url: \"${SG_T_REPO}\"}]}", 1),
			"f.yaml:5:33: skills.repos[0].url: undefined variable ${SG_T_REPO}"},
		{"in limits.max_request_timeout", file + "limits: {max_request_timeout: \"${SG_T_MAX}\"}\n",
			"f.yaml:6:31: limits.max_request_timeout: undefined variable ${SG_T_MAX}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseForSkills(strings.NewReader(tt.yaml), "f.yaml", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SG_T_SRV_SECRET") {
				t.Errorf("ParseForSkills = %v, want only the error %q", err, tt.want)
			}
		})
	}
}
