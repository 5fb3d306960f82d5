package config

import (
	"errors"
	"strings"
	"testing"
)

// TestParseForServices: for the services commands a ${VAR} not set
// outside what they read (an auth token, a server's env) is ignored, one
// in a service's definition is that service's Problem with file:line,
// and one in docker: is still an error. ParseForRun stays strict.
func TestParseForServices(t *testing.T) {
	const file = `docker: {project: demo}
services:
  kv:
    image: kv:dev
    env: {KV_PASSWORD: "${SG_T_SVC_SECRET}"}
  db: {image: "db:1"}
servers:
  notes: {command: node, env: {TOKEN: "${SG_T_SRV_SECRET}"}}
auth: {tokens: ["${SG_T_TOKEN}"]}
`
	cfg, err := ParseForServices(strings.NewReader(file), "f.yaml", nil)
	if err != nil {
		t.Fatalf("ParseForServices: %v", err)
	}
	if cfg.DockerProject() != "demo" {
		t.Errorf("project = %q, want demo", cfg.DockerProject())
	}
	p := cfg.Services["kv"].Problem
	if p == nil || !errors.Is(p, ErrUndefinedVariable) ||
		!strings.HasPrefix(p.Error(), "f.yaml:5:24: services.kv.env.KV_PASSWORD: undefined variable ${SG_T_SVC_SECRET}") {
		t.Errorf("kv's problem = %v, want its unset variable at f.yaml:5:24", p)
	}
	if p != nil && strings.Contains(p.Error(), "desktop client") {
		t.Errorf("kv's problem talks of desktop clients, which do not run services commands: %v", p)
	}
	if p := cfg.Services["db"].Problem; p != nil {
		t.Errorf("db has a problem: %v", p)
	}
	if len(cfg.Notes) != 2 || !strings.Contains(cfg.Notes[0].Error(), "servers.notes.env.TOKEN: undefined variable") ||
		!strings.Contains(cfg.Notes[1].Error(), "auth.tokens[0]: undefined variable") {
		t.Errorf("notes = %v, want the server's and the token's unset variables", cfg.Notes)
	}
	if _, err := ParseForRun(strings.NewReader(file), "f.yaml", nil); !errors.Is(err, ErrUndefinedVariable) {
		t.Errorf("ParseForRun = %v, want the unset token as an error", err)
	}

	for _, tt := range []struct{ name, yaml, want string }{
		{"in docker.project", "docker: {project: \"${SG_T_PROJECT}\"}\nservices:\n  db: {image: db}\n",
			"f.yaml:1:19: docker.project: undefined variable ${SG_T_PROJECT}"},
		{"another problem", file + "limits: {start_wait: soon}\n", `limits.start_wait: "soon" is not a duration`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseForServices(strings.NewReader(tt.yaml), "f.yaml", nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseForServices = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
